package dev.knockwatch.ingest;

import dev.knockwatch.events.EventSources;
import dev.knockwatch.ingest.spi.SourceFormat;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Every source format ingest reads: the {@link dev.knockwatch.events.EventSource}s on the class
 * path that are {@link SourceFormat}s (one line each in
 * {@code META-INF/services/dev.knockwatch.events.EventSource}), by wire name. The one place a
 * file's name or first line is matched to a format; nothing else lists formats.
 */
public final class Formats {

  private static final List<SourceFormat> ALL = EventSources.all().stream()
      .filter(SourceFormat.class::isInstance).map(SourceFormat.class::cast).toList();

  private Formats() {}

  public static List<SourceFormat> all() {
    return ALL;
  }

  /** The format of this wire name ({@code parse --type}, a source's {@code type}). */
  public static Optional<SourceFormat> named(String wireName) {
    return ALL.stream().filter(f -> f.wireName().equals(wireName)).findFirst();
  }

  /**
   * The format a file's name chooses: the one with the longest suffix it ends with
   * ({@code <commandId>.violations.jsonl}); empty when none does.
   */
  public static Optional<SourceFormat> ofFileName(String fileName) {
    SourceFormat best = null;
    int longest = -1;
    for (SourceFormat f : ALL) {
      String s = f.choice().suffixOf(fileName);
      if (s != null && s.length() > longest) {
        best = f;
        longest = s.length();
      }
    }
    return Optional.ofNullable(best);
  }

  /**
   * The format a file's first line (not blank) tells, for a file whose name says nothing: the one
   * format whose test it passes; empty when none does, or more than one (a source then needs a type).
   */
  public static Optional<SourceFormat> ofFirstLine(String firstLine) {
    List<SourceFormat> claim = new ArrayList<>();
    String l = firstLine.strip();
    for (SourceFormat f : ALL) {
      if (f.choice().firstLine() != null && f.choice().firstLine().test(l)) {
        claim.add(f);
      }
    }
    return claim.size() == 1 ? Optional.of(claim.get(0)) : Optional.empty();
  }

  /** The name of {@code fileName} without the suffix that chose {@code format}, else up to its first dot: the layout's command. */
  public static String stem(SourceFormat format, String fileName) {
    String s = format.choice().suffixOf(fileName);
    if (s != null) {
      return fileName.substring(0, fileName.length() - s.length());
    }
    int dot = fileName.indexOf('.');
    return dot > 0 ? fileName.substring(0, dot) : fileName;
  }

  /** {@code srt-violation, proxy-403, ...}: every format's name. */
  public static String names() {
    return String.join(", ", ALL.stream().map(SourceFormat::wireName).toList());
  }

  /** The formats a file's name chooses: what a plain log directory is read as. */
  public static String namesBySuffix() {
    return String.join(", ", ALL.stream().filter(f -> !f.choice().suffixes().isEmpty()).map(SourceFormat::wireName).toList());
  }
}
