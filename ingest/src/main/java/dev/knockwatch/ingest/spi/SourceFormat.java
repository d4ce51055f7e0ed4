package dev.knockwatch.ingest.spi;

import dev.knockwatch.events.EventSource;
import dev.knockwatch.events.config.Key;
import java.util.List;
import java.util.function.Predicate;

/**
 * A log format ingest reads, declared in one place: its wire name and what it is
 * ({@link EventSource}), how a file is chosen for it, whether a file holds one command's lines,
 * the keys a source of it takes, its parser, why its lines may be skipped, what it yields, and who
 * writes what in it. A format is one package under {@code ingest/formats/} with its samples beside
 * it in the test resources; it is registered by one line of
 * {@code META-INF/services/dev.knockwatch.events.EventSource} (docs/ARCHITECTURE.md, "A source
 * format"). Nothing outside its package names it.
 */
public interface SourceFormat extends EventSource {

  /**
   * How a file is chosen for this format when its source names no type: by the end of its name
   * (the log layout's {@code <commandId>.<suffix>}), else by its first line that is not blank.
   *
   * @param firstLine the test on that line; null when the format is never told by it
   * @param firstLineDoc what the test looks for, in words (the formats' table)
   */
  record Choice(List<String> suffixes, Predicate<String> firstLine, String firstLineDoc) {

    /** Chosen by these name endings. */
    public static Choice suffixes(String... suffixes) {
      return new Choice(List.of(suffixes), null, null);
    }

    /** Never chosen for a file: only a source that names it as its type reads it. */
    public static Choice byTypeOnly() {
      return new Choice(List.of(), null, null);
    }

    /** Also chosen for a file whose name says nothing when its first line passes {@code test} ({@code doc}: in words). */
    public Choice orFirstLine(String doc, Predicate<String> test) {
      return new Choice(suffixes, test, doc);
    }

    /** The suffix of {@code fileName} that chooses this format, longest first; null when none does. */
    public String suffixOf(String fileName) {
      String best = null;
      for (String s : suffixes) {
        if (fileName.endsWith(s) && (best == null || s.length() > best.length())) {
          best = s;
        }
      }
      return best;
    }
  }

  /** Why a line of this format is skipped (a fixed word, a metric label) and what such a line is. */
  record Skip(String reason, String what) {}

  /**
   * This format's row of docs/TRUST.md: who writes its records and where, what knockwatch believes
   * of them (the identity it takes from them), and what in them the agent chose.
   */
  record Trust(String writer, String believed, String agentWrites) {}

  Choice choice();

  /**
   * Whether a file holds one command's lines (the layout's {@code <commandId>.<suffix>}: its name
   * names the command, and ingest paces it), not a shared log's.
   */
  boolean perCommand();

  /** The keys a source of this format takes in sources.yaml beside {@code path}, {@code type} and {@code fields}. */
  default List<Key<?>> keys() {
    return List.of();
  }

  /** A parser for one file, with its source's values of {@link #keys} and what the layout says of the file. */
  LineParser parser(FileOptions options);

  /** Why its lines may be skipped, beside {@code blank} (a line of white space), which is every format's. */
  List<Skip> skips();

  /** What it yields as events, in a sentence or two. */
  String yields();

  Trust trust();

  /**
   * The OpenTelemetry log records this format reads: which ({@code reads}, in words for the
   * formats' table as {@code readsDoc}), a reader per exporter, and why a record it reads may be
   * skipped. A format that reads no telemetry has none (null).
   */
  record Telemetry(java.util.function.Predicate<TelemetryRecord> reads, String readsDoc,
      java.util.function.Supplier<TelemetryReader> reader, List<Skip> skips) {}

  /** The longest line ingest reads whole: a longer one keeps its start and end, and is rejected. */
  int DEFAULT_MAX_LINE_BYTES = 64 * 1024;

  /** The longest line of this format ingest reads whole (an OTLP export's line is a whole request). */
  default int maxLineBytes() {
    return DEFAULT_MAX_LINE_BYTES;
  }

  /** The telemetry this format reads, or null: the OTLP endpoint and OTLP files hand it its records. */
  default Telemetry telemetry() {
    return null;
  }
}
