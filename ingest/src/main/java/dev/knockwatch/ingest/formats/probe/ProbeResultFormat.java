package dev.knockwatch.ingest.formats.probe;

import dev.knockwatch.ingest.spi.FileOptions;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.SourceFormat;
import java.util.List;

/** Guard probe results: {@code <agentId>/<commandId>.probe.jsonl}, as {@code probe guard --json} prints them. */
public final class ProbeResultFormat implements SourceFormat {

  public static final String NAME = "probe-result";

  @Override
  public String wireName() {
    return NAME;
  }

  @Override
  public String summary() {
    return "guard probe results, one JSON object a line, as `probe guard --json` prints them: `probe` (name) and"
        + " `refused` (true/false) required; `expected`, `observed`, `kind`, `target` (host:port, URL or path),"
        + " `command`, `timestamp`, `agentId`, `commandId` optional (claims: the directory and file name decide)."
        + " Not refusals: only the `wall-breach` rule reads them";
  }

  @Override
  public Choice choice() {
    return Choice.suffixes(".probe.jsonl").orFirstLine("a JSON object with `probe` and `refused`",
        l -> l.startsWith("{") && l.contains("\"probe\"") && l.contains("\"refused\""));
  }

  @Override
  public boolean perCommand() {
    return true;
  }

  @Override
  public LineParser parser(FileOptions options) {
    return new ProbeResultParser();
  }

  @Override
  public List<Skip> skips() {
    return List.of();
  }

  @Override
  public String yields() {
    return "each probe result (not a refusal: only `wall-breach` reads it)";
  }

  @Override
  public Trust trust() {
    return new Trust("knockwatch itself: `GuardRunner` writes `<logs>/knockwatch-guard/<commandId>.probe.jsonl`"
        + " after each guard probe it ran",
        "that the guard probes ran, and the agent they ran as (the directory: only knockwatch writes"
        + " `knockwatch-guard/`)",
        "nothing in knockwatch's own results; a result forged in an agent's own directory is that agent's"
        + " (`wall-breach` and `identity-conflict` fire on it)");
  }
}
