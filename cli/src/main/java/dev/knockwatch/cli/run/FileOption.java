package dev.knockwatch.cli.run;

import dev.knockwatch.events.Sanitize;
import java.io.IOException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * A file a flag names, read as text: when it cannot be, a {@link UsageException} that names the
 * flag, the file and the cause in words ({@code --token-file /nonexistent/token: no such file}).
 */
public final class FileOption {
  private FileOption() {}

  /** The file's text, stripped; the flag, the file and why when it cannot be read. */
  public static String read(String flag, Path file) {
    String where = flag + " " + Sanitize.text(file.toString(), 300);
    if (Files.isDirectory(file)) {
      throw new UsageException(where + ": is a directory, not a file");
    }
    try {
      return Files.readString(file, StandardCharsets.UTF_8).strip();
    } catch (NoSuchFileException e) {
      throw new UsageException(where + ": no such file");
    } catch (AccessDeniedException e) {
      throw new UsageException(where + ": permission denied");
    } catch (CharacterCodingException e) {
      throw new UsageException(where + ": not UTF-8 text");
    } catch (IOException e) {
      throw new UsageException(where + ": cannot be read (" + why(e) + ")");
    }
  }

  /** That {@code file} is a file this process can read; else the flag, the file and why, in words. */
  public static void check(String flag, Path file) {
    String where = flag + " " + Sanitize.text(file.toString(), 300);
    if (Files.isDirectory(file)) {
      throw new UsageException(where + ": is a directory, not a file");
    }
    if (!Files.exists(file)) {
      throw new UsageException(where + ": no such file");
    }
    if (!Files.isReadable(file)) {
      throw new UsageException(where + ": permission denied");
    }
  }

  /** An I/O failure in words: its message, else its kind. */
  public static String why(IOException e) {
    String m = e.getMessage();
    return m == null || m.isBlank() ? e.getClass().getSimpleName() : Sanitize.text(m, 300);
  }
}
