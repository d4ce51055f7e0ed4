package dev.knockwatch.ingest.formats.proxy;

import dev.knockwatch.events.config.Key;
import dev.knockwatch.events.config.YamlNode;
import dev.knockwatch.ingest.spi.FileOptions;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.SourceFormat;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** What a command's client saw of its proxy: {@code <agentId>/<commandId>.stderr.log} or {@code .curl.log}. */
public final class ProxyTranscriptFormat implements SourceFormat {

  public static final String NAME = "proxy-403";
  /** The srt bridge's records of the same command, whose {@code <sandbox_violations>} block a stderr restates. */
  private static final String RECORDS_SUFFIX = ".violations.jsonl";

  static final Key<List<String>> DENY_HEADERS = Key.of("denyHeaders", "list of header names",
      CurlTranscriptParser.DEFAULT_DENY_HEADERS, String.join(", ", CurlTranscriptParser.DEFAULT_DENY_HEADERS),
      "the response headers whose value says why the proxy refused (a 4xx or 5xx carrying one is a refusal)",
      ProxyTranscriptFormat::headers);

  @Override
  public String wireName() {
    return NAME;
  }

  @Override
  public String summary() {
    return "what the command's client saw: `curl -v` transcripts and raw proxy responses — 403/407 with `X-Proxy-Error`"
        + " (`blocked-by-allowlist`, `blocked-by-sandbox-runtime`), `X-Deny-Reason` or smokescreen's `X-Smokescreen-Error`"
        + " (its 407 is a refusal, not a challenge), the reason in a CONNECT status"
        + " phrase, the target from `CONNECT host:port` or the request line; SOCKS refusals (`Can't complete SOCKS5"
        + " connection`), socat's `E CONNECT host:port: REASON`, bypass attempts (`Could not resolve host` under"
        + " `--noproxy`, `Immediate connect fail for IP: Network is unreachable`), and the `deny ...` lines of srt's"
        + " `<sandbox_violations>` annotation (as `srt-violation` events). The commandId is the file name's; srt's proxy"
        + " user (`srt.<base64>`), printed in the command's own stderr, is a claim, used only where the file name is no"
        + " id. Inside a CONNECT tunnel the proxy allowed, the origin's answers are skipped, and a URL path is never"
        + " taken for a host (`bad-target`); `curl --trace` hex dumps are read like `curl -v`";
  }

  @Override
  public Choice choice() {
    return Choice.suffixes(".stderr.log", ".curl.log").orFirstLine("a `curl -v` line (`* `, `> `, `< `), an HTTP"
        + " status line or `<sandbox_violations>`",
        l -> l.startsWith("* ") || l.startsWith("> ") || l.startsWith("< ") || l.startsWith("HTTP/1.")
            || l.equals("<sandbox_violations>"));
  }

  @Override
  public boolean perCommand() {
    return true;
  }

  @Override
  public List<Key<?>> keys() {
    return List.of(DENY_HEADERS);
  }

  /** The srt bridge writes a command's records and, at its end, its stderr with srt's restatement of them. */
  @Override
  public LineParser parser(FileOptions options) {
    CurlTranscriptParser p = new CurlTranscriptParser(options.get(DENY_HEADERS));
    return options.besides(options.stem() + RECORDS_SUFFIX) ? p.restatedByRecords() : p;
  }

  @Override
  public List<Skip> skips() {
    return List.of(
        new Skip("context", "part of a refusal the parser is still reading: a request line, a header, a `--trace` hex"
            + " row, the proxy user, the end of headers; the refusal's event is the line that completes it"),
        new Skip("not-a-refusal", "what is no refusal: curl's TLS chatter and connection notes, an allowed answer"),
        new Skip("origin-response", "a status inside a CONNECT tunnel that the proxy allowed (`200 Connection"
            + " established`): the origin's answer (a 403 of GitHub's rate limit, a 404), never the sandbox's"),
        new Skip("origin-exchange", "a request to the origin inside such a tunnel (`> GET /path HTTP/2`): its path is"
            + " never taken for a host"),
        new Skip("restated", "a line that says again what was counted: srt's `<sandbox_violations>` block beside the"
            + " command's own records, curl's closing `curl: (56) CONNECT tunnel failed` after the answer it printed,"
            + " `curl: (6)` after its `* Could not resolve host`"));
  }

  @Override
  public String yields() {
    return "each refusal the proxy answered (403, 407, or any 4xx/5xx with its deny header), in `curl -v`, `curl"
        + " --trace` or raw form; a raw answer with no request before it is a refusal with `targetUnknown: true` (what"
        + " is known kept: the reason, the class the body names, the command); curl's own error when it printed no"
        + " answer (`curl: (56) CONNECT tunnel failed, response 403`); SOCKS refusals; socat's `E CONNECT`; `Could not"
        + " resolve host` and `Immediate connect fail` (a direct dial); each `deny …` line of a `<sandbox_violations>`"
        + " block with no records beside it. A refusal whose target is a path and no `Host:` came with it is rejected"
        + " (`bad-target`): a URL path is never a host";
  }

  @Override
  public Trust trust() {
    return new Trust("the sandboxed command itself: its stderr as the harness captured it (curl's transcript, srt's"
        + " `<sandbox_violations>` annotation appended after it ended)",
        "who: the agent (the directory) and the command (the file name); the proxy user `srt.<base64>` printed in it"
        + " is a claim",
        "every byte: it can add refusals to its own command (a forged 403), never to another's, and cannot make curl's"
        + " own refusals vanish (docs/TRUST.md, \"What the agent can and cannot forge in a transcript\")");
  }

  private static List<String> headers(YamlNode node, String where) {
    List<String> out = new ArrayList<>();
    for (YamlNode h : node.oneOrMany(where + ": denyHeaders")) {
      String name = h.string(where + ": denyHeaders");
      if (name != null) {
        out.add(name.toLowerCase(Locale.ROOT));
      }
    }
    return List.copyOf(out);
  }
}
