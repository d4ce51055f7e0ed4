package dev.knockwatch.ingest.formats.privoxy;

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
import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.time.format.ResolverStyle;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One privoxy log file, line by line. Privoxy serves each client connection on a thread of its own
 * and starts each line but its Common Log Format lines with {@code DATE TIME THREAD LEVEL: }
 * (errlog.c, 3.0.34), so the refusal {@code Crunch: Blocked: URL} (jcc.c, send_crunch_response) is
 * tied to its client by the thread's {@code Connect: Accepted connection from ADDRESS} line before it
 * (jcc.c, serve): this parser keeps each thread's client until the thread closes the connection or
 * accepts another, or a privoxy starts. What the client wrote (the URL) comes only after privoxy's
 * prefix, so a URL that holds another line's words is never that line.
 */
final class PrivoxyParser implements LineParser {

  /** Threads whose client is remembered; privoxy's default {@code max-client-connections} is 128. */
  static final int MAX_THREADS = 4096;

  private static final Pattern LINE = Pattern.compile("(?s)^(\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}\\.\\d{3}) "
      + "([0-9a-f]{8,16}) (Crunch|Connect|Info|Request|Error|Fatal error|Header|Tagging|Writing|Received|Re-Filter"
      + "|Force|Redirect|Gif-Deanimate|CGI|Actions|Unknown log level): (.*)$");
  private static final Pattern CLF = Pattern.compile(
      "(?s)^\\S+ - - \\[\\d{2}/[A-Z][a-z]{2}/\\d{4}:\\d{2}:\\d{2}:\\d{2} [+-]\\d{4}\\] \".*\" \\d{3} \\d+$");
  private static final Pattern ACCEPTED = Pattern.compile("^Accepted connection from (\\S{1,64}) on socket \\d+$");
  private static final Pattern STARTED = Pattern.compile("Initialized \\d+ socket slots\\.");
  private static final Pattern LIMIT_CONNECT = Pattern.compile(
      "(?s)^Request from (\\S{1,64}) marked for blocking\\. (limit-connect\\{[^}]{0,64}\\}) doesn't allow CONNECT");
  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("uuuu-MM-dd HH:mm:ss.SSS")
      .withResolverStyle(ResolverStyle.STRICT);

  private final Identities agents;
  private final ZoneId zone;
  /** Each thread's client address, and the limit-connect that marked its request for blocking. */
  private final Map<String, Client> threads = new LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Client> eldest) {
      return size() > MAX_THREADS;
    }
  };

  private record Client(String address, String limit) {}

  PrivoxyParser(Identities agents, ZoneId zone) {
    this.agents = agents;
    this.zone = zone;
  }

  @Override
  public Parsed parse(SourceLine src) {
    String text = src.text();
    Matcher m = LINE.matcher(text);
    if (!m.matches()) {
      if (CLF.matcher(text).matches()) {
        return Parsed.skipped("access-log");
      }
      return Parsed.rejected(Rejection.UNPARSEABLE, "not a privoxy log line (DATE TIME THREAD LEVEL: MESSAGE)");
    }
    String thread = m.group(2);
    String message = m.group(4);
    return switch (m.group(3)) {
      case "Connect" -> connection(thread, message);
      case "Info" -> info(thread, message);
      case "Crunch" -> crunch(src, time(m.group(1)), thread, message);
      default -> Parsed.skipped("other-message");
    };
  }

  private Parsed connection(String thread, String message) {
    Matcher a = ACCEPTED.matcher(message);
    if (a.matches()) {
      String address = address(a.group(1));
      if (address == null) {
        threads.remove(thread);
      } else {
        threads.put(thread, new Client(address, null));
      }
    } else if (message.startsWith("Closing client socket ")) {
      threads.remove(thread);
    } else if (STARTED.matcher(message).matches()) {
      // a privoxy started (gateway.c, once a process): its thread ids name none of the last one's clients
      threads.clear();
    }
    return Parsed.skipped("connection");
  }

  /** {@code debug 4096}: limit-connect names the client and the rule of a CONNECT it marks for blocking. */
  private Parsed info(String thread, String message) {
    Matcher l = LIMIT_CONNECT.matcher(message);
    if (l.find()) {
      String address = address(l.group(1));
      Client known = threads.get(thread);
      if (address != null && (known == null || known.address().equals(address))) {
        threads.put(thread, new Client(address, l.group(2)));
      }
    }
    return Parsed.skipped("other-message");
  }

  private Parsed crunch(SourceLine src, Instant at, String thread, String message) {
    int colon = message.indexOf(": ");
    String why = colon < 0 ? message : message.substring(0, colon);
    String reason = switch (why) {
      case "Blocked" -> "blocked by privoxy";
      case "Untrusted" -> "untrusted: not on privoxy's trust list";
      default -> null;
    };
    if (reason == null) {
      return Parsed.skipped(switch (why) {
        case "DNS failure" -> "dns-failure";
        case "Connection failure", "Connection timeout", "Forwarding failed", "No server data received" ->
            "upstream-failure";
        default -> "not-a-refusal";
      });
    }
    String target = message.substring(colon + 2);
    Client client = threads.get(thread);
    if (client != null && client.limit() != null) {
      reason = reason + " (" + client.limit() + ")";
      threads.put(thread, new Client(client.address(), null));
    }
    if (client == null) {
      return new Parsed.Rejected(Rejection.UNMAPPED_IDENTITY, "privoxy's Crunch line names no client: its thread's"
          + " connection line (Connect: Accepted connection from ADDRESS) was not read; privoxy writes it with debug 2",
          at, "privoxy client-unknown");
    }
    boolean connect = !target.contains("://");
    Optional<HostClassifier.HostPort> hp = connect ? HostClassifier.hostPort(target) : HostClassifier.fromUrl(target);
    if (hp.isEmpty()) {
      return new Parsed.Rejected(Rejection.BAD_TARGET, "privoxy's Crunch names no host: "
          + Sanitize.text(target, 200), at);
    }
    String identity = "src=" + client.address();
    Attribution.Result who = Attribution.ofWall(PrivoxyFormat.NAME, identity, Map.of("source", client.address()), agents);
    if (who instanceof Attribution.Refused r) {
      return new Parsed.Rejected(r.code(), r.reason(), at, r.identity());
    }
    String host = hp.get().host();
    ViolationEvent.Builder b = src.newEvent().agentId(((Attribution.Attributed) who).agentId()).commandUnknown(true)
        .source(PrivoxyFormat.NAME).kind(Kind.NETWORK)
        .action(connect ? "http-connect" : "http-request")
        .method(connect ? "CONNECT" : null)
        .url(connect ? null : Redactor.safe(target, 1024))
        .host(host).port(hp.get().port()).addressClass(HostClassifier.classify(host).orElse(null))
        .sourceAddress(client.address())
        .reason(reason)
        .subject(new ViolationEvent.Subject(PrivoxyFormat.NAME, identity))
        .observedAt(at);
    return Parsed.of(b.build());
  }

  /** Privoxy's local time (no offset) in the source's zone. */
  private Instant time(String text) {
    try {
      return LocalDateTime.parse(text, TIME).atZone(zone).toInstant();
    } catch (DateTimeException e) {
      return SourceLine.UNREADABLE_TIME;
    }
  }

  /** A client's IP literal, canonical; null for anything else (privoxy writes only numeric addresses). */
  private static String address(String a) {
    if (a.length() > 45) {
      return null;
    }
    String c = HostClassifier.canonical(a);
    return HostClassifier.isIpLiteral(c) ? c : null;
  }
}
