package dev.knockwatch.ingest.tail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The names logrotate gives a file: a rotation suffix ({@code .1}, {@code .12}, {@code -20261130},
 * {@code -2026113012}) makes it the same stream as the name before it. Compressed ones are never
 * read (their bytes are not the lines).
 */
final class RotatedNames {

  private static final Pattern ROTATED = Pattern.compile("(.+?)(?:\\.\\d{1,3}|-\\d{8}(?:\\d{2}){0,3})");
  private static final Pattern COMPRESSED = Pattern.compile("(?i).*\\.(?:gz|bz2|xz|zst|z|zip|lz4)");

  private RotatedNames() {}

  /** The name a rotated file was rotated from, or null when {@code fileName} carries no rotation suffix. */
  static String rotatedFrom(String fileName) {
    Matcher m = ROTATED.matcher(fileName);
    return m.matches() ? m.group(1) : null;
  }

  /** The stream a file belongs to: the name it was rotated from, or its own. */
  static String stream(String fileName) {
    String base = rotatedFrom(fileName);
    return base != null ? base : fileName;
  }

  static boolean compressed(String fileName) {
    return COMPRESSED.matcher(fileName).matches();
  }

  /** Whether a tailer that {@code matches} reads {@code file}: a file that matches, or a rotated name of one; never a compressed one. */
  static boolean follows(Path file, Predicate<Path> matches) {
    String name = file.getFileName().toString();
    if (compressed(name)) {
      return false;
    }
    String base = rotatedFrom(name);
    return matches.test(file) || base != null && matches.test(file.resolveSibling(base));
  }

  /** Where the file of {@code fileKey}, once at {@code file}, is now under another name of its stream; null when nowhere. */
  static Path rotatedSibling(Path file, Object fileKey) {
    if (fileKey == null || file.getParent() == null) {
      return null;
    }
    String mine = stream(file.getFileName().toString());
    try (Stream<Path> siblings = Files.list(file.getParent())) {
      for (Path sib : (Iterable<Path>) siblings::iterator) {
        String name = sib.getFileName().toString();
        if (sib.equals(file) || !stream(name).equals(mine) || compressed(name)) {
          continue;
        }
        Object key = Files.readAttributes(sib, BasicFileAttributes.class).fileKey();
        if (key != null && key.toString().equals(fileKey.toString())) {
          return sib;
        }
      }
    } catch (IOException e) {
      return null;
    }
    return null;
  }

  /**
   * The id name of a file that came after a rotation at {@code rel}: the name with the file's key
   * and the head its predecessor had, so it is the same however often the rotation is found again
   * (a crash before the checkpoint recorded it), and never that of an earlier file of the name.
   */
  static String afterRotation(String rel, Object fileKey, String previousHead) {
    return rel + "@" + fileKey + "~" + previousHead;
  }
}
