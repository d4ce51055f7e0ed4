package dev.knockwatch.ingest.spi;

import dev.knockwatch.events.config.Key;
import dev.knockwatch.events.config.KeyValues;
import java.util.function.Predicate;

/**
 * What one file's parser is made with: its source's values of the format's keys (their defaults
 * where the file was found by its name alone), the file's path relative to the watched root, its
 * name without the suffix that chose the format (the layout's command), and whether a file of
 * another name lies beside it.
 */
public final class FileOptions {

  private final KeyValues values;
  private final String file;
  private final String stem;
  private final Predicate<String> exists;

  public FileOptions(KeyValues values, String file, String stem, Predicate<String> exists) {
    this.values = values;
    this.file = file;
    this.stem = stem;
    this.exists = exists;
  }

  /** Options with every key's default, for a file known by nothing but its name. */
  public static FileOptions defaults(SourceFormat format, String file, String stem, Predicate<String> exists) {
    return new FileOptions(KeyValues.defaults(format.keys()), file, stem, exists);
  }

  /** The value of one of the format's keys: as the source gives it, else its default. */
  public <T> T get(Key<T> key) {
    return values.get(key);
  }

  /** The file's path relative to the watched root. */
  public String file() {
    return file;
  }

  /** The file's name without the suffix that chose its format ({@code <commandId>} of {@code <commandId>.<suffix>}). */
  public String stem() {
    return stem;
  }

  /** Whether a file named {@code name} lies in this file's directory. */
  public boolean besides(String name) {
    int slash = file.lastIndexOf('/');
    return exists.test(file.substring(0, slash + 1) + name);
  }
}
