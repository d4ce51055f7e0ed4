package dev.knockwatch.ingest.formats.otlp;

import dev.knockwatch.ingest.otlp.TelemetryFormats;
import dev.knockwatch.ingest.spi.FileOptions;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.SourceFormat;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * OpenTelemetry logs as the Collector's {@code file} exporter writes them (one
 * {@code ExportLogsServiceRequest} in OTLP JSON a line): what an agent's harness exported, captured
 * to be replayed and tested. Each record goes to the format that reads it (Codex's, Claude Code's),
 * as the OTLP endpoint's records do.
 */
public final class OtlpFormat implements SourceFormat {

  public static final String NAME = "otlp";

  @Override
  public String wireName() {
    return NAME;
  }

  @Override
  public String summary() {
    return "OpenTelemetry logs in OTLP JSON, one `ExportLogsServiceRequest` a line, as the OpenTelemetry Collector's"
        + " `file` exporter writes them: an agent harness's telemetry, captured. Each log record is read by the format"
        + " that reads it (" + String.join(", ", TelemetryFormats.all().stream().map(SourceFormat::wireName).toList())
        + "), as the OTLP endpoint's records are; the agent is the layout's (the directory), never a resource"
        + " attribute";
  }

  @Override
  public Choice choice() {
    return Choice.suffixes(".otlp.jsonl").orFirstLine("a JSON object that starts with `resourceLogs`",
        l -> l.startsWith("{\"resourceLogs\""));
  }

  /** A line is a whole request, as an exporter sends one (the endpoint's bound on a body, inflated). */
  public static final int MAX_LINE_BYTES = 16 * 1024 * 1024;

  @Override
  public int maxLineBytes() {
    return MAX_LINE_BYTES;
  }

  /** An exporter's records of many sessions and commands: a shared log. */
  @Override
  public boolean perCommand() {
    return false;
  }

  @Override
  public LineParser parser(FileOptions options) {
    return new OtlpLinesParser();
  }

  @Override
  public List<Skip> skips() {
    Map<String, Skip> all = new LinkedHashMap<>();
    all.put("empty-request", new Skip("empty-request", "a request that holds no log record"));
    all.put(TelemetryFormats.UNREAD, new Skip(TelemetryFormats.UNREAD,
        "a record no format reads: telemetry that tells of no wall (an API call's latency, a token count)"));
    for (SourceFormat f : TelemetryFormats.all()) {
      for (Skip s : f.telemetry().skips()) {
        all.putIfAbsent(s.reason(), new Skip(s.reason(), f.wireName() + ": " + s.what()));
      }
    }
    return new ArrayList<>(all.values());
  }

  @Override
  public String yields() {
    return "what the format that reads each record yields; a record of the wrong shape is rejected alone, the line's"
        + " other records read";
  }

  @Override
  public Trust trust() {
    return new Trust("the agent's harness (Codex, Claude Code) exported the records, outside the sandbox; the"
        + " Collector wrote them down",
        "the agent: the layout's (the directory the file lies in); the rest as the format that reads each record says",
        "as the format that reads each record says; the resource's attributes (the exporter's choice) name no agent");
  }
}
