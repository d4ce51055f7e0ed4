package dev.knockwatch.ingest.formats.otlp;

import dev.knockwatch.ingest.otlp.OtlpJson;
import dev.knockwatch.ingest.otlp.OtlpLogs;
import dev.knockwatch.ingest.otlp.TelemetryFormats;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.Rejection;
import dev.knockwatch.ingest.spi.SourceLine;
import java.util.ArrayList;
import java.util.List;

/**
 * One file of OTLP JSON lines: each line's records, in the order they happened, each read by the
 * format that reads it with one reader per format for the whole file (what it learnt of one
 * record holds for the next line's).
 */
final class OtlpLinesParser implements LineParser {

  private final TelemetryFormats formats = new TelemetryFormats();

  @Override
  public Parsed parse(SourceLine line) {
    OtlpLogs.Decoded decoded;
    try {
      decoded = OtlpJson.read(line.text());
    } catch (OtlpLogs.BadRequest e) {
      return Parsed.rejected(Rejection.UNPARSEABLE, e.getMessage());
    }
    if (decoded.size() == 0) {
      return Parsed.skipped("empty-request");
    }
    List<Parsed.Part> parts = new ArrayList<>(decoded.size());
    for (OtlpLogs.Entry e : TelemetryFormats.inTimeOrder(decoded.entries())) {
      SourceLine where = TelemetryFormats.place(e, line.file(), line.offset(), line.agentIdFromPath(),
          line.ingestHost(), line.ingestedAt());
      Parsed outcome = formats.read(e.record(), where).outcome();
      parts.add(new Parsed.Part(outcome, outcome instanceof Parsed.Rejected ? e.text() : null));
    }
    for (OtlpLogs.Bad b : decoded.bad()) {
      parts.add(new Parsed.Part(Parsed.rejected(Rejection.UNPARSEABLE, "a log record of the wrong shape: "
          + b.reason()), b.text()));
    }
    return new Parsed.Several(parts);
  }
}
