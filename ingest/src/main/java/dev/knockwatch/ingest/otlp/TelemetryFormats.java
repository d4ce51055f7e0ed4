package dev.knockwatch.ingest.otlp;

import dev.knockwatch.events.EventSources;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.Rejection;
import dev.knockwatch.ingest.spi.SourceFormat;
import dev.knockwatch.ingest.spi.SourceLine;
import dev.knockwatch.ingest.spi.TelemetryReader;
import dev.knockwatch.ingest.spi.TelemetryRecord;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Which format reads a telemetry record: the formats of the registry that read telemetry
 * ({@link SourceFormat#telemetry}), asked in the order of their names, the first that reads the
 * record reading it. One instance per exporter (an agent host's client, one file): each format's
 * reader keeps what it learns from that exporter's records alone. Not for several threads.
 */
public final class TelemetryFormats {

  /** Why a record no format reads is skipped: telemetry that says nothing of a wall (an API call's cost). */
  public static final String UNREAD = "other-telemetry";

  private static final List<SourceFormat> READERS = EventSources.all().stream()
      .filter(SourceFormat.class::isInstance).map(SourceFormat.class::cast).filter(f -> f.telemetry() != null)
      .toList();

  private final Map<SourceFormat, TelemetryReader> readers = new HashMap<>();

  /** The formats that read telemetry. */
  public static List<SourceFormat> all() {
    return READERS;
  }

  /** What a record became, and the format that read it (null when none did: a skip). */
  public record Read(SourceFormat format, Parsed outcome) {}

  /**
   * The record read by the first format that reads it, else skipped as {@value #UNREAD}. A
   * reader's failure on it is its rejection ({@code parser-error}), never the other records'.
   */
  public Read read(TelemetryRecord record, SourceLine where) {
    for (SourceFormat f : READERS) {
      SourceFormat.Telemetry t = f.telemetry();
      if (t.reads().test(record)) {
        try {
          return new Read(f, readers.computeIfAbsent(f, k -> t.reader().get()).read(record, where));
        } catch (RuntimeException | StackOverflowError e) {
          return new Read(f, Parsed.rejected(Rejection.PARSER_ERROR, "the " + f.wireName()
              + " reader failed on this record: " + e.getClass().getSimpleName()
              + (e.getMessage() == null ? "" : ": " + Sanitize.text(e.getMessage(), 200))));
        }
      }
    }
    return new Read(null, Parsed.skipped(UNREAD));
  }

  /**
   * A request's records in the order they happened: an exporter groups a batch by resource and
   * scope (Codex's proxy decisions apart from its calls), and a reader that ties one record to
   * another needs them as they came. Records without a time come first, in their order.
   */
  public static List<OtlpLogs.Entry> inTimeOrder(List<OtlpLogs.Entry> entries) {
    List<OtlpLogs.Entry> sorted = new ArrayList<>(entries);
    sorted.sort(Comparator.comparing((OtlpLogs.Entry e) -> e.record().time(),
        Comparator.nullsFirst(Comparator.<Instant>naturalOrder())));
    return sorted;
  }

  /**
   * Where a record stands for its reader: the file (or the endpoint's client) and offset it came
   * from, the agent its exporter is mapped to, and an id name of the agent and the record's digest,
   * so that the same record gets the same event ids however it came.
   */
  public static SourceLine place(OtlpLogs.Entry entry, String file, long offset, String agentId, String ingestHost,
      Instant ingestedAt) {
    return new SourceLine(file, offset, "", agentId, null, ingestHost, ingestedAt,
        "otlp/" + (agentId == null ? "-" : agentId) + "/" + entry.digest());
  }
}
