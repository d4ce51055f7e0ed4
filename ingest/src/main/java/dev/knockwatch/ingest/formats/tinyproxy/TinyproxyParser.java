package dev.knockwatch.ingest.formats.tinyproxy;

import dev.knockwatch.events.HostClassifier;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Redactor;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.spi.Attribution;
import dev.knockwatch.ingest.spi.Identities;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.Rejection;
import dev.knockwatch.ingest.spi.SourceLine;
import java.time.ZoneId;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * tinyproxy's log file, read as tinyproxy 1.11.1 writes it ({@code src/reqs.c}, {@code src/acl.c}).
 * A refusal is its last line: {@code Proxying refused on filtered domain "HOST"} (or {@code url
 * "URL"}: {@code FilterURLs}) and {@code Refused CONNECT method on port N} name neither the
 * connection nor the client, so each is tied to the open request it can be, which the
 * connection's earlier lines name: {@code Connect (file descriptor N): ADDRESS} (who), {@code
 * Request (file descriptor N): METHOD URL PROTOCOL} (what). {@code Unauthorized connection from
 * "ADDRESS".} (the Allow list) names its client itself. Who the client is, is what the source's
 * {@code agents} map its address to; the command is unknown.
 *
 * <p>Connections interleave: several may be open with their requests logged when a refusal comes.
 * Only the requests it fits can be it (tinyproxy filters the host or URL, and the port, the same
 * way for each); if they are all one client's, or all one agent's, it is theirs. If they are
 * different agents' (or no agent's), the log cannot say whose it is, and the refusal is rejected
 * rather than guessed, as is one with no request open at all (a log written at {@code LogLevel
 * Notice}, without the connections' lines). A request whose host tinyproxy's log does not show
 * (its line cut inside the host, a transparent request's at {@code LogLevel Connect}) fits a refusal
 * only when no request names the refused host.
 */
final class TinyproxyParser implements LineParser {

  private static final Pattern CONNECT = Pattern.compile("^Connect \\(file descriptor ([0-9]{1,10})\\): (\\S{1,64})(?: at \\[.*\\])?$");
  private static final Pattern REQUEST = Pattern.compile("^Request \\(file descriptor ([0-9]{1,10})\\): (.*)$", Pattern.DOTALL);
  private static final Pattern TRANSPARENT = Pattern.compile("^process_request: trans (?:Host|IP) (\\S+) (.*) for ([0-9]{1,10})$",
      Pattern.DOTALL);
  private static final Pattern FILTERED = Pattern.compile("^Proxying refused on filtered (domain|url) \"");
  private static final Pattern PORT = Pattern.compile("^Refused CONNECT method on port (-?[0-9]{1,11})$");
  private static final Pattern UNAUTHORIZED = Pattern.compile("^Unauthorized connection from \"(\\S{1,64})\"\\.$");
  private static final Pattern ESTABLISHED = Pattern.compile("^Established connection to host \"(.*)\" using file descriptor -?[0-9]{1,10}\\.$",
      Pattern.DOTALL);
  private static final Pattern CLOSED = Pattern.compile("^Closed connection between local client \\(fd:([0-9]{1,10})\\) and remote client \\(fd:-?[0-9]{1,10}\\)$");
  private static final String STARTED = "Initializing tinyproxy ...";
  /** The bytes of a line tinyproxy cut, without its newline: its buffer's 800, less the newline and the NUL. */
  static final int CUT_BYTES = 798;

  /** What the notices of refusals no one agent can be given are keyed by: each kind pages once. */
  static final String NO_CLIENT = "client unknown";
  static final String CLIENTS_AMBIGUOUS = "clients ambiguous";

  private final Identities agents;
  private final ZoneId zone;
  private final Connections open = new Connections();

  TinyproxyParser(Identities agents, ZoneId zone) {
    this.agents = agents;
    this.zone = zone;
  }

  @Override
  public Parsed parse(SourceLine src) {
    LogLine l = LogLine.of(src.text(), zone, src.ingestedAt());
    if (l == null) {
      return Parsed.rejected(Rejection.UNPARSEABLE, "not a line of tinyproxy's log file (LEVEL Mmm dd hh:mm:ss.mmm [PID]: …)");
    }
    String msg = l.message();
    Matcher m;
    switch (l.level()) {
      case "CONNECT" -> {
        if ((m = CONNECT.matcher(msg)).matches()) {
          open.connect(l.pid(), Long.parseLong(m.group(1)), address(m.group(2)));
          return Parsed.skipped("context");
        }
        if ((m = REQUEST.matcher(msg)).matches()) {
          open.request(l.pid(), Long.parseLong(m.group(1)), Request.ofLine(m.group(2), cut(src.text())));
          return Parsed.skipped("context");
        }
        if ((m = ESTABLISHED.matcher(msg)).matches()) {
          open.established(l.pid(), m.group(1));
          return Parsed.skipped("allowed");
        }
      }
      case "NOTICE" -> {
        if ((m = FILTERED.matcher(msg)).find()) {
          return filtered(src, l, m.group(1).equals("url"), msg.substring(m.end()), cut(src.text()));
        }
        if ((m = UNAUTHORIZED.matcher(msg)).matches()) {
          return unauthorized(src, l, m.group(1));
        }
        if (msg.equals(STARTED)) {
          open.clear();
        }
      }
      case "INFO" -> {
        if ((m = PORT.matcher(msg)).matches()) {
          return port(src, l, Long.parseLong(m.group(1)));
        }
        if ((m = TRANSPARENT.matcher(msg)).matches()) {
          open.rewrite(l.pid(), Long.parseLong(m.group(3)), Request.transparent(m.group(1), m.group(2)));
          return Parsed.skipped("context");
        }
        if ((m = CLOSED.matcher(msg)).matches()) {
          open.closed(l.pid(), Long.parseLong(m.group(1)));
        }
      }
      default -> {
        // tinyproxy's own state (start, signals, errors): nothing of a refusal
      }
    }
    return Parsed.skipped("other-message");
  }

  /**
   * {@code quoted}: what follows the opening quote; a line tinyproxy cut ({@code lineCut}) without its
   * closing one holds the start of the host or URL, which the request's must start with. A request whose
   * own line was cut inside its host (or URL) hides what tinyproxy filtered (the host follows the first
   * {@code @} and ends at the last {@code :}, either of which may lie past the cut), and a transparent
   * request's host is read at LogLevel Info only: each fits any refusal, but only when no request fits it
   * by what it names.
   */
  private Parsed filtered(SourceLine src, LogLine l, boolean url, String quoted, boolean lineCut) {
    boolean cut = lineCut && !quoted.endsWith("\"");
    String text = quoted.endsWith("\"") ? quoted.substring(0, quoted.length() - 1) : quoted;
    List<Connections.Open> candidates = open.candidates(l.pid(), r -> {
      String mine = url ? r.url() : r.host();
      return mine != null && !(url ? r.urlCut() : r.hostCut()) && (mine.equals(text) || cut && mine.startsWith(text));
    });
    if (candidates.isEmpty()) {
      candidates = open.candidates(l.pid(), r -> (url ? r.urlCut() : r.hostCut()) || r.host() == null && !r.isConnect());
    }
    String what = "filtered " + (url ? "url" : "domain");
    // a domain's refusal names the host as tinyproxy filtered it; a URL's, the request's
    return refusal(l, candidates, "Proxying refused on " + what, src,
        r -> target(r, url ? r.host() : text, r.eventPort(), what + " (403 Filtered)"));
  }

  private Parsed port(SourceLine src, LogLine l, long port) {
    return refusal(l, open.candidates(l.pid(), r -> r.isConnect() && r.port() == port),
        "Refused CONNECT method on port " + port, src,
        r -> target(r, r.host(), r.eventPort(), "CONNECT port not in ConnectPort (403 Access violation)"));
  }

  /** What was refused: the request's method, host, port and URL where known, and tinyproxy's reason. */
  private record Target(String action, String method, String host, Integer port, String url, String reason) {}

  /** What a refused request asked for: a CONNECT's target is its host and port, any other's its URL too. */
  private static Target target(Request r, String host, Integer port, String reason) {
    String h = HostClassifier.canonical(host);
    return new Target(r.isConnect() ? "http-connect" : "http-request", Sanitize.text(r.method(), 16),
        h == null || h.isEmpty() ? null : h, port,
        r.isConnect() ? null : Redactor.safe(r.url(), Sanitize.MAX_URL_CHARS), reason);
  }

  /** The Allow list refused a client before it sent a request: the client is named, the target is not. */
  private Parsed unauthorized(SourceLine src, LogLine l, String client) {
    String address = address(client);
    if (address == null) {
      return Parsed.rejected(Rejection.UNPARSEABLE, "tinyproxy's Unauthorized connection names no address");
    }
    open.refusedBeforeRequest(l.pid(), address);
    Attribution.Result who = Attribution.ofWall(TinyproxyFormat.NAME, "src=" + address, Map.of("source", address), agents);
    if (who instanceof Attribution.Refused r) {
      return new Parsed.Rejected(r.code(), r.reason(), l.at(), r.identity());
    }
    return Parsed.of(event(src, l, new Target("connect", null, null, null, null, "client not in Allow (403 Access denied)"),
        ((Attribution.Attributed) who).agentId(), address));
  }

  /**
   * The refusal of one of the open requests it fits ({@code candidates}, oldest first), if they are one
   * client's or one agent's; else rejected. {@code line}: the refusal's words, for a rejection's reason.
   */
  private Parsed refusal(LogLine l, List<Connections.Open> candidates, String line, SourceLine src,
      Function<Request, Target> target) {
    if (candidates.isEmpty()) {
      return new Parsed.Rejected(Rejection.UNMAPPED_IDENTITY, "tinyproxy's \"" + Sanitize.text(line, 200)
          + "\" follows no open request it can be: its client is unknown (tinyproxy logs connections at LogLevel"
          + " Connect or Info)", l.at(), TinyproxyFormat.NAME + " " + NO_CLIENT);
    }
    Set<String> clients = new LinkedHashSet<>();
    Set<Optional<String>> mapped = new LinkedHashSet<>();
    for (Connections.Open o : candidates) {
      clients.add(String.valueOf(o.client));
      mapped.add(o.client == null ? Optional.empty() : agents.agentOf(Map.of("source", o.client)));
    }
    Connections.Open first = candidates.get(0);
    if (clients.size() == 1 && first.client != null) {
      open.end(first);
      Attribution.Result who = Attribution.ofWall(TinyproxyFormat.NAME, "src=" + first.client,
          Map.of("source", first.client), agents);
      if (who instanceof Attribution.Refused r) {
        return new Parsed.Rejected(r.code(), r.reason(), l.at(), r.identity());
      }
      return Parsed.of(event(src, l, target.apply(first.request), ((Attribution.Attributed) who).agentId(),
          first.client));
    }
    if (mapped.size() == 1 && mapped.iterator().next().isPresent()) {
      open.end(first);
      return Parsed.of(event(src, l, target.apply(first.request), mapped.iterator().next().get(), null));
    }
    return new Parsed.Rejected(Rejection.UNMAPPED_IDENTITY, "tinyproxy's \"" + Sanitize.text(line, 200)
        + "\" names no connection, and the open requests it can be are of " + candidates.size()
        + " connections from clients the source maps to no one agent (" + Sanitize.text(String.join(", ", clients), 200)
        + "): whose it is, is unknown", l.at(), TinyproxyFormat.NAME + " " + CLIENTS_AMBIGUOUS);
  }

  /**
   * The refusal's event: what {@code target} holds, the agent, and {@code client}, the address the refused
   * connection came from where the log tells one.
   */
  private static ViolationEvent event(SourceLine src, LogLine l, Target t, String agent, String client) {
    return src.newEvent().agentId(agent).commandUnknown(true).source(TinyproxyFormat.NAME).kind(Kind.NETWORK)
        .action(t.action()).method(t.method()).host(t.host()).port(t.port()).url(t.url())
        .targetUnknown(t.host() == null ? true : null)
        .addressClass(t.host() == null ? null : HostClassifier.classify(t.host()).orElse(null)).reason(t.reason())
        .sourceAddress(client)
        .subject(client == null ? null : new ViolationEvent.Subject(TinyproxyFormat.NAME, "src=" + client))
        .observedAt(l.at()).build();
  }

  /** Whether tinyproxy may have cut the line: its buffer holds 798 bytes of it (src/log.c, STRING_LENGTH). */
  static boolean cut(String line) {
    if (line.length() < CUT_BYTES / 3) {
      return false;
    }
    int bytes = 0;
    for (int i = 0; i < line.length() && bytes < CUT_BYTES; i++) {
      char c = line.charAt(i);
      bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : Character.isSurrogate(c) ? 2 : 3;
    }
    return bytes >= CUT_BYTES;
  }

  /** An IP literal, canonical; null for anything else (tinyproxy writes its peer's address). */
  private static String address(String a) {
    if (a == null || a.isEmpty() || a.length() > 45) {
      return null;
    }
    String c = HostClassifier.canonical(a);
    return HostClassifier.isIpLiteral(c) ? c : null;
  }
}
