package dev.knockwatch.ingest.formats.squid;

import dev.knockwatch.events.config.Key;
import dev.knockwatch.ingest.spi.FileOptions;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.SourceFormat;
import java.util.List;
import java.util.regex.Pattern;

/** Squid's access log: a shared proxy log ({@code access.log}), one line per request. */
public final class SquidFormat implements SourceFormat {

  public static final String NAME = "squid";
  private static final Pattern NATIVE = Pattern.compile("^\\d{9,}\\.\\d{3}\\s+-?\\d+\\s+\\S+\\s+[A-Z_]+/\\d{3}\\s");
  private static final Pattern COMBINED = Pattern.compile("^\\S+ \\S+ \\S+ \\[\\d{2}/\\w{3}/\\d{4}:[^\\]]+\\] \"[A-Z]+ ");

  static final Key<String> LOGFORMAT = Key.of("logformat", "squid, combined, knock, or a logformat string", null,
      "each line tried as knock, squid and combined", "the `logformat` the log was written in",
      (node, where) -> {
        String text = node.string(where + ": logformat");
        if (text == null) {
          return null;
        }
        try {
          SquidLogFormat.of(text);
          return text;
        } catch (IllegalArgumentException e) {
          node.problem(where + ": logformat: " + e.getMessage());
          return null;
        }
      });

  @Override
  public String wireName() {
    return NAME;
  }

  @Override
  public String summary() {
    return "Squid access logs in the `squid`, `combined` or `knock` logformat (the `squid` format plus `%un` and"
        + " `%{X-Command-Id}>h`), recognised line by line: TCP_DENIED, 403 and 407 become events, allowed requests are"
        + " skipped and counted. The commandId is the `X-Command-Id` header, else the proxy user `srt.<base64>`: the"
        + " client's claims, the only ones a shared log has; a source config's `{commandId}` decides over them. A user"
        + " name Squid lower-cased (`casesensitive off`) is no id";
  }

  @Override
  public Choice choice() {
    return Choice.suffixes("access.log").orFirstLine("a line in Squid's native or the combined logformat",
        l -> NATIVE.matcher(l).find() || COMBINED.matcher(l).find());
  }

  @Override
  public boolean perCommand() {
    return false;
  }

  @Override
  public List<Key<?>> keys() {
    return List.of(LOGFORMAT);
  }

  @Override
  public LineParser parser(FileOptions options) {
    String logformat = options.get(LOGFORMAT);
    return logformat == null ? new SquidAccessLogParser() : new SquidAccessLogParser(logformat);
  }

  @Override
  public List<Skip> skips() {
    return List.of(new Skip("allowed", "a request the proxy let through (no 403/407, no TCP_DENIED)"));
  }

  @Override
  public String yields() {
    return "each denied request (TCP_DENIED, or a status of 403/407)";
  }

  @Override
  public Trust trust() {
    return new Trust("Squid, the company's egress proxy, outside the sandbox: each line's structure, its status and"
        + " its time",
        "the agent only where the source config or its path names it (`fields: {agentId: …}`, `{agentId}`): a shared"
        + " log has no layout of commands, so the command is the client's claim (`X-Command-Id`, the proxy user)"
        + " unless the config's `{commandId}` names it",
        "the URL, the host, the headers it sent (`X-Command-Id`), its proxy user name");
  }
}
