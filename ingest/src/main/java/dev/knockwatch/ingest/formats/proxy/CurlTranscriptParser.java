package dev.knockwatch.ingest.formats.proxy;

import dev.knockwatch.events.AddressClass;
import dev.knockwatch.events.CommandId;
import dev.knockwatch.events.HostClassifier;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Redactor;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.spi.Attribution;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.Rejection;
import dev.knockwatch.ingest.spi.SourceLine;
import dev.knockwatch.ingest.formats.srt.SrtFormat;
import dev.knockwatch.ingest.formats.srt.SrtLine;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a sandboxed command's client saw of its refusals: {@code curl -v} transcripts and raw
 * proxy responses in the command's captured stderr ({@code <commandId>.stderr.log} /
 * {@code .curl.log}). One transcript yields one event per refusal:
 * <ul>
 *   <li>a 403 or 407 response (with {@code < } or raw), its deny header
 *       ({@code X-Proxy-Error}, {@code X-Deny-Reason}, smokescreen's {@code X-Smokescreen-Error}, or a
 *       configured one) and, on CONNECT, the
 *       reason in the status phrase; the target from the request line or CONNECT;</li>
 *   <li>SOCKS refusals ({@code Can't complete SOCKS5 connection to HOST. (2)});</li>
 *   <li>socat's {@code E CONNECT host:port: REASON} (git over ssh through srt's ProxyCommand);</li>
 *   <li>bypass attempts: {@code Could not resolve host} (a direct dial with {@code --noproxy}),
 *       {@code Immediate connect fail for IP: Network is unreachable};</li>
 *   <li>the {@code deny ...} lines of srt's {@code <sandbox_violations>} annotation.</li>
 * </ul>
 * The same in {@code curl --trace} form: its {@code == Info:} lines and the hex dumps of the
 * headers sent and received, decoded ({@link TraceDump}).
 *
 * <p>Only the proxy's refusals count. Once a CONNECT tunnel is up ({@code 200 Connection
 * established}), what follows is the origin's: its statuses (HTTP/1.1 or HTTP/2, 403 or 429) are
 * skipped ({@code origin-response}), and its request lines ({@code > GET /path HTTP/2}) never
 * replace the tunnel's target. A target that is no host (an origin-form path with no Host header)
 * is rejected ({@code bad-target}); a proxy answer with no request line at all (a raw client)
 * is still a refusal, with {@code targetUnknown}.
 *
 * <p>The commandId is the file name's; the one srt put in the proxy user ({@code srt.<base64>}) is
 * a claim, used only where the file name is no id ({@link Attribution}, docs/TRUST.md). One instance reads one file.
 */
public final class CurlTranscriptParser implements LineParser {

  // (?d): only '\n' ends a line. The agent writes these lines, and a U+0085 or U+2028 in a status
  // phrase ended Java's '.' and '$' there: the answer read as no status at all.
  public static final List<String> DEFAULT_DENY_HEADERS = List.of("x-proxy-error", "x-deny-reason", "x-smokescreen-error");

  private static final Pattern PROXY_USER = Pattern.compile("(?d)Proxy auth using Basic with user 'srt\\.([^']*)'");
  private static final Pattern PROXY_URL_USER = Pattern.compile("(?d)_proxy == '[a-z0-9]+://srt\\.([^:@']*)[:@]");
  private static final Pattern REQUEST = Pattern.compile("(?d)^> ([A-Z]+) (\\S+) HTTP/\\d(?:\\.\\d)?$");
  private static final Pattern TUNNEL = Pattern.compile("(?d)^\\* Establish HTTP proxy tunnel to (\\S+)$");
  private static final Pattern STATUS = Pattern.compile("(?d)^(?:< )?HTTP/\\d(?:\\.\\d)? (\\d{3})(?: (.*))?$");
  private static final Pattern HEADER = Pattern.compile("(?d)^(?:< )?([A-Za-z0-9-]+):\\s*(.*)$");
  private static final Pattern END_OF_HEADERS = Pattern.compile("(?d)^(?:< ?)?$");
  private static final Pattern CHUNK_SIZE = Pattern.compile("(?d)^[0-9a-fA-F]{1,8}$");
  private static final Pattern SOCKS_CONNECT = Pattern.compile("(?d)^\\* SOCKS5? connect to (\\S+)");
  private static final Pattern SOCKS_FAIL = Pattern.compile("(?d)^\\* Can't complete SOCKS5? connection to (.*?)\\. \\((\\d+)\\)$");
  private static final Pattern SOCAT = Pattern.compile(
      "(?d)^(\\d{4}/\\d{2}/\\d{2} \\d{2}:\\d{2}:\\d{2}) socat\\[\\d+\\] E CONNECT (\\S+): (.*)$");
  private static final Pattern NO_RESOLVE = Pattern.compile("(?d)^\\* Could not resolve host: (\\S+)$");
  private static final Pattern TRYING = Pattern.compile("(?d)^\\*\\s+Trying (\\S+)\\.\\.\\.$");
  private static final Pattern CONNECT_FAIL = Pattern.compile("(?d)^\\* Immediate connect fail for (\\S+): (.*)$");
  /** What curl says of a refused CONNECT (with -v, or with -sS as its error): the refusal, when no answer was seen. */
  private static final Pattern TUNNEL_FAILED = Pattern.compile("(?d)^(?:\\* |curl: \\(56\\) )CONNECT tunnel failed, response (\\d{3})$");
  private static final Pattern CURL_NO_RESOLVE = Pattern.compile("(?d)^curl: \\(6\\) Could not resolve host: (\\S+)$");
  private static final Pattern REQUEST_HOST = Pattern.compile("(?d)^> [Hh]ost:\\s*(\\S+)\\s*$");
  private static final Pattern NEW_CONNECTION = Pattern.compile("(?d)^\\* (?:Connected to |Closing connection)");

  private final List<String> denyHeaders;

  private String proxyUserId;
  private String method;
  private String requestTarget;
  /** The request's Host header: the host of an origin-form request ({@code GET / HTTP/1.1}). */
  private String requestHost;
  /** A CONNECT tunnel is up: what comes through it is the origin's, not the proxy's. */
  private boolean tunnel;
  /** What this attempt was refused already (its answer, its lookup): curl's closing words restate it. */
  private boolean answerSeen;
  private String unresolved;
  private final TraceDump trace = new TraceDump();
  private String socksTarget;
  private String trying;
  private boolean inViolations;
  private Response response;

  /** A refusal whose headers (and, raw, whose body) are still being read. */
  private static final class Response {
    int status;
    String phrase;
    String denyValue;
    String date;
    /** Not curl's "< " transcript but the response's own bytes: a body follows the headers. */
    boolean raw;
    /** The headers' end, when the body is awaited: the event is that line's. */
    SourceLine bodyAt;
    /** The last line of it read: where the refusal stands if the file ends in its headers. */
    SourceLine lastAt;
    boolean chunkSeen;
    String body;
  }

  public CurlTranscriptParser() {
    this(DEFAULT_DENY_HEADERS);
  }

  /** @param denyHeaders header names (lower case) whose value says why the proxy refused */
  public CurlTranscriptParser(List<String> denyHeaders) {
    this.denyHeaders = denyHeaders;
  }

  private boolean restated;

  /**
   * The command's srt records are read too (its {@code .violations.jsonl} lies beside): the
   * {@code <sandbox_violations>} block restates them, line for line, and counting it would count
   * each refusal twice. Its lines are then skipped ({@code restated}).
   */
  public CurlTranscriptParser restatedByRecords() {
    this.restated = true;
    return this;
  }

  /** A raw response's headers end at an empty line: this format reads it. */
  @Override
  public Parsed blank(SourceLine src) {
    return parse(src);
  }

  @Override
  public Parsed parse(SourceLine src) {
    String line = src.text().endsWith("\r") ? src.text().substring(0, src.text().length() - 1) : src.text();
    TraceDump.Read read = trace.read(line);
    if (read instanceof TraceDump.Info i) {
      return logical("* " + i.text(), src);
    }
    if (read instanceof TraceDump.Pending) {
      return Parsed.skipped("context");
    }
    if (read instanceof TraceDump.Done d) {
      Parsed all = Parsed.skipped("context");
      for (String l : d.lines()) {
        all = merge(all, logical(d.sent() ? "> " + l : l.isEmpty() ? "<" : "< " + l, src));
      }
      return all;
    }
    return logical(line, src); // not a line of a trace dump (or one that broke off)
  }

  /** What one physical line made of two logical ones: their events together, else the one that says most. */
  private static Parsed merge(Parsed a, Parsed b) {
    if (a instanceof Parsed.Events x && b instanceof Parsed.Events y) {
      return new Parsed.Events(java.util.stream.Stream.concat(x.events().stream(), y.events().stream()).toList());
    }
    if (a instanceof Parsed.Events) {
      return a;
    }
    if (b instanceof Parsed.Events || b instanceof Parsed.Rejected) {
      return b;
    }
    return a instanceof Parsed.Rejected ? a : b;
  }

  private Parsed logical(String line, SourceLine src) {
    if (inViolations || line.equals("<sandbox_violations>")) {
      return violationsBlock(line, src);
    }
    if (response != null) {
      return responseLine(line, src);
    }
    Matcher m;
    if ((m = PROXY_USER.matcher(line)).find() || (m = PROXY_URL_USER.matcher(line)).find()) {
      decodeProxyUser(m.group(1)).ifPresent(id -> proxyUserId = id);
      return Parsed.skipped("context");
    }
    if ((m = REQUEST.matcher(line)).matches()) {
      if (tunnel && !m.group(1).equals("CONNECT")) {
        return Parsed.skipped("origin-exchange"); // a request to the origin, inside the tunnel
      }
      tunnel = false;
      answerSeen = false;
      method = m.group(1);
      requestTarget = m.group(2);
      requestHost = null;
      return Parsed.skipped("context");
    }
    if ((m = REQUEST_HOST.matcher(line)).matches()) {
      if (!tunnel) {
        requestHost = m.group(1);
      }
      return Parsed.skipped(tunnel ? "origin-exchange" : "context");
    }
    if ((m = TUNNEL.matcher(line)).matches()) {
      tunnel = false;
      answerSeen = false;
      method = "CONNECT";
      requestTarget = m.group(1);
      requestHost = null;
      return Parsed.skipped("context");
    }
    if (NEW_CONNECTION.matcher(line).find()) {
      tunnel = false;
      return Parsed.skipped("context");
    }
    if ((m = STATUS.matcher(line)).matches()) {
      if (tunnel) {
        return Parsed.skipped("origin-response"); // the origin's answer, through the proxy's tunnel
      }
      answerSeen = true;
      int status = Integer.parseInt(m.group(1));
      String phrase = m.group(2) == null ? "" : m.group(2).strip();
      if (status / 100 == 2 && ("CONNECT".equals(method) || phrase.equalsIgnoreCase("Connection established"))) {
        tunnel = true;
        return Parsed.skipped("context");
      }
      // 403 and 407 are refusals by themselves; srt also refuses with 400, 405, 421 and 503
      // (tlsTerminate, filterRequest, requireHostMatch, too-many-tunnels), marked by its deny header
      if (status >= 400) {
        response = new Response();
        response.lastAt = src;
        response.status = status;
        response.phrase = phrase;
        response.raw = !line.startsWith("<");
        return Parsed.skipped("context");
      }
      return Parsed.skipped("not-a-refusal");
    }
    if ((m = SOCKS_CONNECT.matcher(line)).find()) {
      socksTarget = m.group(1);
      return Parsed.skipped("context");
    }
    if ((m = SOCKS_FAIL.matcher(line)).matches()) {
      String target = socksTarget != null ? socksTarget : m.group(1);
      String reason = ProxyWords.socksReason(m.group(2));
      return event(src, b -> b.action("socks-tunnel").reason(reason), target, null);
    }
    if ((m = SOCAT.matcher(line)).matches()) {
      Instant at = ProxyWords.socatTime(m.group(1));
      String reason = m.group(3);
      return event(src, b -> b.action("connect").method("CONNECT").reason(Sanitize.text(reason, 1024)), m.group(2), at);
    }
    if ((m = TUNNEL_FAILED.matcher(line)).matches()) {
      int status = Integer.parseInt(m.group(1));
      if (answerSeen || (status != 403 && status != 407)) {
        return Parsed.skipped(answerSeen ? "restated" : "not-a-refusal");
      }
      answerSeen = true; // curl -sS prints no answer: its error is the only word of the refusal
      String target = "CONNECT".equals(method) ? requestTarget : null;
      return event(src, b -> b.action("http-connect").method("CONNECT")
          .reason(status == 407 ? "proxy authentication required" : "CONNECT tunnel failed, response " + status)
          .targetUnknown(target == null ? Boolean.TRUE : null), target, null);
    }
    if ((m = CURL_NO_RESOLVE.matcher(line)).matches() && m.group(1).equals(unresolved)) {
      unresolved = null;
      return Parsed.skipped("restated"); // curl -v said it on its '*' line already
    }
    if ((m = NO_RESOLVE.matcher(line)).matches() || (m = CURL_NO_RESOLVE.matcher(line)).matches()) {
      String host = m.group(1);
      unresolved = line.startsWith("* ") ? host : null; // curl's closing "curl: (6)" line restates it
      return event(src, b -> b.action("dns").reason("could not resolve host: a direct dial outside the proxy"), host, null);
    }
    if ((m = TRYING.matcher(line)).matches()) {
      tunnel = false;
      trying = m.group(1);
      return Parsed.skipped("context");
    }
    if ((m = CONNECT_FAIL.matcher(line)).matches()) {
      String reason = m.group(2);
      String target = trying != null && trying.startsWith(m.group(1) + ":") ? trying : m.group(1);
      return event(src, b -> b.action("connect").reason(Sanitize.text(reason, 1024)), target, null);
    }
    return Parsed.skipped("not-a-refusal");
  }

  @Override
  public boolean pending() {
    return response != null;
  }

  @Override
  public Parsed end() {
    Response r = response;
    response = null;
    if (r == null || (r.bodyAt == null && r.status != 403 && r.status != 407 && r.denyValue == null)) {
      return Parsed.skipped("context");
    }
    return refusal(r, r.bodyAt != null ? r.bodyAt : r.lastAt);
  }

  private Parsed responseLine(String line, SourceLine src) {
    SourceLine previous = response.lastAt;
    response.lastAt = src;
    if (response.bodyAt != null) {
      if (!response.chunkSeen && CHUNK_SIZE.matcher(line).matches()) {
        response.chunkSeen = true; // Transfer-Encoding: chunked: the body's text is on the next line
        return Parsed.skipped("context");
      }
      // the first line after a raw response's headers is its body, which carries srt's reason
      Response r = response;
      response = null;
      SourceLine at = r.bodyAt;
      r.bodyAt = null;
      if (!line.isBlank() && !line.startsWith("* ") && !line.startsWith("> ") && !line.startsWith("< ")) {
        r.body = line.strip();
        return refusal(r, at);
      }
      return merge(refusal(r, at), logical(line, src));
    }
    if (END_OF_HEADERS.matcher(line).matches()) {
      if (response.status != 403 && response.status != 407 && response.denyValue == null) {
        response = null;
        return Parsed.skipped("not-a-refusal");
      }
      if (response.raw) {
        response.bodyAt = src;
        return Parsed.skipped("context");
      }
      Response r = response;
      response = null;
      return refusal(r, src);
    }
    Matcher h = HEADER.matcher(line);
    if (!h.matches()) {
      // headers that end without their empty line (the log cut there, other output written between):
      // the answer is judged on what it said, and this line is read anew, so that a cut answer
      // cannot swallow the attempts after it
      Response r = response;
      response = null;
      Parsed judged = r.status == 403 || r.status == 407 || r.denyValue != null ? refusal(r, previous)
          : Parsed.skipped("not-a-refusal");
      return merge(judged, logical(line, src));
    }
    String name = h.group(1).toLowerCase(Locale.ROOT);
    if (denyHeaders.contains(name)) {
      response.denyValue = h.group(2).strip();
    } else if (name.equals("date")) {
      response.date = h.group(2).strip();
    }
    return Parsed.skipped("context");
  }

  /** The refusal a response's headers (and a raw response's body) describe, as an event of the line at {@code src}. */
  private Parsed refusal(Response r, SourceLine src) {
    boolean connect = "CONNECT".equals(method);
    // the reason: the status phrase unless it is the status's generic one, else the body's words; a 407 that
    // carries a deny header is a refusal, not a challenge (smokescreen answers every denial so), and says why there
    String reason = r.status == 407 ? (r.denyValue != null ? r.denyValue : "proxy authentication required")
        : !r.phrase.isEmpty() && !ProxyWords.isGeneric(r.phrase) ? r.phrase
        : r.body != null && !r.body.isEmpty() ? r.body : null;
    Instant at = ProxyWords.date(r.date);
    String target = requestTarget != null && ProxyWords.isOriginForm(requestTarget) ? requestHost : requestTarget;
    if (requestTarget != null && target == null) {
      return Parsed.rejected(Rejection.BAD_TARGET, "the refused request names no host: its target "
          + Sanitize.text(requestTarget, 200) + " is a path, and no Host header came before the refusal");
    }
    AddressClass named = reason == null ? null : SrtLine.addressClassOf(reason);
    return event(src, b -> {
      b.action(connect ? "http-connect" : "http-request")
          .method(method)
          .url(!connect && target != null && target.contains("://") ? Redactor.safe(target, 1024) : null)
          .targetUnknown(target == null ? Boolean.TRUE : null)
          .proxyError(r.denyValue == null ? null : Sanitize.text(r.denyValue, 200))
          .reason(reason == null ? null : Sanitize.text(reason, 1024));
    }, target, at, named);
  }


  private Parsed violationsBlock(String line, SourceLine src) {
    if (line.equals("<sandbox_violations>")) {
      inViolations = true;
      return Parsed.skipped("context");
    }
    if (line.equals("</sandbox_violations>")) {
      inViolations = false;
      return Parsed.skipped("context");
    }
    Optional<SrtLine> deny = SrtLine.parse(line);
    if (deny.isEmpty()) {
      return Parsed.skipped("not-a-refusal");
    }
    if (restated) {
      return Parsed.skipped("restated");
    }
    SrtLine d = deny.get();
    return withCommandId(src, src.newEvent()
        .source(SrtFormat.NAME)
        .kind(d.kind())
        .action(d.action())
        .method(d.method())
        .host(d.host())
        .port(d.port())
        .url(d.url() == null ? null : Redactor.safe(d.url(), 1024))
        .path(d.path() == null ? null : Sanitize.text(d.path(), 4096))
        .reason(d.reason() == null ? null : Sanitize.text(d.reason(), 1024))
        .addressClass(d.addressClass() != null ? d.addressClass()
            : d.host() == null ? null : HostClassifier.classify(d.host()).orElse(null)),
        null);
  }

  private interface Fill {
    void into(ViolationEvent.Builder b);
  }

  private Parsed event(SourceLine src, Fill fill, String target, Instant at) {
    return event(src, fill, target, at, null);
  }

  /** {@code named}: the class the proxy's own words gave, which stands over what the target's literal reads as. */
  private Parsed event(SourceLine src, Fill fill, String target, Instant at, AddressClass named) {
    ViolationEvent.Builder b = src.newEvent().source(ProxyTranscriptFormat.NAME).kind(Kind.NETWORK);
    fill.into(b);
    if (target != null) {
      Optional<HostClassifier.HostPort> hp = HostClassifier.target(target).filter(h -> ProxyWords.isHost(h.host()));
      if (hp.isEmpty()) {
        return Parsed.rejected(Rejection.BAD_TARGET, "the refusal's target names no host: " + Sanitize.text(target, 200));
      }
      b.host(hp.get().host()).port(hp.get().port())
          .addressClass(named != null ? named : HostClassifier.classify(hp.get().host()).orElse(null));
    } else if (named != null) {
      b.addressClass(named);
    }
    return withCommandId(src, b, at);
  }

  /** docs/TRUST.md: the proxy user is in the command's own stderr, a claim; the file name decides. */
  private Parsed withCommandId(SourceLine src, ViolationEvent.Builder b, Instant at) {
    Attribution.Result who = Attribution.of(src, null, proxyUserId);
    if (who instanceof Attribution.Refused r) {
      return Parsed.rejected(r.code(), r.reason()
          + " (no srt proxy user carrying an id, and the file is not named <commandId>.stderr.log)");
    }
    return Parsed.of(((Attribution.Attributed) who).applyTo(b).observedAt(at).build());
  }

  /** srt puts base64(commandId) in the proxy user, %-escaped in a proxy URL; base64 of command text is no id. */
  static Optional<String> decodeProxyUser(String encoded) {
    try {
      String b64 = URLDecoder.decode(encoded, StandardCharsets.UTF_8);
      String decoded = new String(Base64.getDecoder().decode(b64), StandardCharsets.UTF_8);
      return CommandId.isValid(decoded) ? Optional.of(decoded) : Optional.empty();
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
  }
}
