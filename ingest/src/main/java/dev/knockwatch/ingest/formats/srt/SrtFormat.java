package dev.knockwatch.ingest.formats.srt;

import dev.knockwatch.ingest.spi.FileOptions;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.SourceFormat;
import java.util.List;

/**
 * srt's violation records, as the srt bridge writes them: {@code <agentId>/<commandId>.violations.jsonl},
 * on Linux and on macOS (where srt's log monitor adds Seatbelt's reports to the same store).
 */
public final class SrtFormat implements SourceFormat {

  public static final String NAME = "srt-violation";
  public static final String SUFFIX = ".violations.jsonl";

  @Override
  public String wireName() {
    return NAME;
  }

  @Override
  public String summary() {
    return "srt violation records, one JSON object a line as the srt bridge writes them from srt's violation store"
        + " (`line`, `encodedCommand`, `command`, `timestamp`; `commandId`, `agentId`, `sessionId`, `taskId` where known):"
        + " all four `line` shapes (`deny network-outbound HOST:PORT (REASON)`, `deny http-request METHOD URL (REASON)`,"
        + " `deny socks-tunnel HOST:PORT (REASON)`, `deny SYSCALL /path`), with the `resolved to a … address` class;"
        + " on macOS also Seatbelt's report as srt keeps it (`PROCESS(PID) deny(N) OPERATION TARGET`: `file-…` with"
        + " its path, `network-…` with its address and port or its Unix socket's path, any other operation with its"
        + " target as the reason)";
  }

  @Override
  public Choice choice() {
    return Choice.suffixes(SUFFIX).orFirstLine("a JSON object with a `line` holding `deny ` (Seatbelt's: `deny(`)",
        l -> l.startsWith("{") && l.contains("\"line\"") && (l.contains("deny ") || l.contains(") deny(")));
  }

  @Override
  public boolean perCommand() {
    return true;
  }

  @Override
  public LineParser parser(FileOptions options) {
    return new SrtViolationParser();
  }

  @Override
  public List<Skip> skips() {
    return List.of();
  }

  @Override
  public String yields() {
    return "each record whose `line` is a `deny …` line (any of the four shapes) or Seatbelt's `… deny(N) …` report";
  }

  @Override
  public Trust trust() {
    return new Trust("the srt bridge (`probes/srt-bridge`, or the operator's harness), outside the sandbox, from srt's"
        + " violation store: the record's structure, `line` as srt cleaned it, and the file it goes to",
        "who: the agent (the directory) and the command (the file name); the record's `agentId`, `commandId` and"
        + " decoded `encodedCommand` are claims, used only where the file name is no id; `sessionId` and `taskId` as"
        + " the bridge wrote them (its caller's `--session` and `--task`)",
        "the host, URL and path inside `line` (on macOS also the process name Seatbelt reports, the program it"
        + " ran), the command text (`command`), the time; whole records, where it can write its own log");
  }
}
