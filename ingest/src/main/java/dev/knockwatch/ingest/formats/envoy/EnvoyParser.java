package dev.knockwatch.ingest.formats.envoy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.HostClassifier;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Redactor;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.spi.Attribution;
import dev.knockwatch.ingest.spi.Identities;
import dev.knockwatch.ingest.spi.JsonLine;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.Rejection;
import dev.knockwatch.ingest.spi.SourceLine;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * One line of Envoy's access log: a JSON object (a {@code json_format} with Istio's field names),
 * else Istio's text format, else Envoy's default format string. A refusal is a line whose
 * {@code %RESPONSE_CODE_DETAILS%} (the RBAC HTTP filter's 403) or
 * {@code %CONNECTION_TERMINATION_DETAILS%} (the RBAC network filter's close) Envoy set to
 * {@code rbac_access_denied_matched_policy[POLICY]}, POLICY {@code none} where no policy matched.
 * A 403 alone is not one: the upstream writes 403s too. Who was refused is what the source's
 * {@code agents} map the downstream peer to (its address, its certificate's URI SAN or subject);
 * the command is unknown.
 */
final class EnvoyParser implements LineParser {

  /** The RBAC filters' detail (source/extensions/filters/common/rbac/utility.cc, responseDetail). */
  static final String RBAC_DENIED = "rbac_access_denied";
  private static final int MAX_NAME_CHARS = 512;
  private static final int MAX_REASON_CHARS = 512;

  private final Identities agents;

  EnvoyParser(Identities agents) {
    this.agents = agents;
  }

  /** Its mapping is fixed, and each line is read alone. */
  @Override
  public boolean linesStandAlone() {
    return true;
  }

  @Override
  public Parsed parse(SourceLine src) {
    String text = src.text();
    AccessLogLine line;
    if (text.startsWith("{")) {
      JsonLine json = JsonLine.read(text);
      if (json.object() == null) {
        return json.rejected();
      }
      line = AccessLogLine.json(json.object());
    } else {
      line = AccessLogLine.text(text);
      if (line == null) {
        return Parsed.rejected(Rejection.UNPARSEABLE, "neither a JSON object, Istio's text format nor Envoy's default"
            + " format (a quote in a quoted field, such as the User-Agent, makes a text line unreadable)");
      }
    }
    if (denied(line.termination())) {
      return refusal(src, line, line.termination(), true);
    }
    if (denied(line.details())) {
      return refusal(src, line, line.details(), false);
    }
    if (!line.detailsLogged() && ("403".equals(line.responseCode()) || line.method() == null)) {
      // a 403 is the RBAC filter's or the upstream's, a connection's line (no method) may be one the network filter closed
      return Parsed.skipped("no-details");
    }
    return Parsed.skipped("403".equals(line.responseCode()) ? "not-rbac" : "allowed");
  }

  private static boolean denied(String details) {
    return details != null && details.startsWith(RBAC_DENIED);
  }

  private Parsed refusal(SourceLine src, AccessLogLine l, String details, boolean connection) {
    Instant at = time(l.startTime());
    HostClassifier.HostPort client = l.source() == null ? null : HostClassifier.hostPort(l.source())
        .filter(h -> HostClassifier.isIpLiteral(h.host())).orElse(null);
    String address = client == null ? null : client.host();
    String san = name(l.uriSan());
    String subject = name(l.subject());

    Map<String, String> knows = new LinkedHashMap<>();
    put(knows, "uri_san", san);
    put(knows, "subject", subject);
    put(knows, "source", address);
    String identity = san != null ? "san=" + san : subject != null ? "subject=" + subject
        : address != null ? "src=" + address : "no-identity";
    Attribution.Result who = Attribution.ofWall(EnvoyFormat.NAME, identity, knows, agents);
    if (who instanceof Attribution.Refused r) {
      return new Parsed.Rejected(r.code(), r.reason(), at, r.identity());
    }

    String method = l.method() == null ? null : Sanitize.text(l.method(), 32).toUpperCase(Locale.ROOT);
    boolean connect = !connection && "CONNECT".equals(method);
    String authority = l.authority();
    Optional<HostClassifier.HostPort> target = HostClassifier.hostPort(authority != null ? authority : l.serverName());
    ViolationEvent.Builder b = src.newEvent().agentId(((Attribution.Attributed) who).agentId()).commandUnknown(true)
        .source(EnvoyFormat.NAME).kind(Kind.NETWORK)
        .action(connection ? "connect" : connect ? "http-connect" : "http-request")
        .method(connection ? null : method)
        .url(connection || connect ? null : url(authority, l.path()))
        .sourceAddress(address).sourcePort(client == null ? null : client.port())
        .reason(policy(details))
        .subject(new ViolationEvent.Subject(EnvoyFormat.NAME, identity))
        .observedAt(at);
    target.ifPresentOrElse(
        h -> b.host(h.host()).port(h.port()).addressClass(HostClassifier.classify(h.host()).orElse(null)),
        () -> b.targetUnknown(true));
    return Parsed.of(b.build());
  }

  /**
   * The request's URL, its query's secrets redacted: the path as it came where it is absolute (a
   * forward proxy's request), else the authority and the path as a network-path reference
   * ({@code //host/path}: the access log names no scheme).
   */
  private static String url(String authority, String path) {
    if (path == null) {
      return null;
    }
    String lower = path.toLowerCase(Locale.ROOT);
    if (lower.startsWith("http://") || lower.startsWith("https://")) {
      return Redactor.safe(path, 1024);
    }
    return authority == null ? null : Redactor.safe("//" + authority + path, 1024);
  }

  /**
   * The policy the detail names, {@code none} where none matched (Istio's names hold brackets of
   * their own: {@code ns[NS]-policy[NAME]-rule[N]}); a bare {@code rbac_access_denied} names none.
   */
  static String policy(String details) {
    int open = details.indexOf('[');
    int close = details.lastIndexOf(']');
    String policy = open < 0 || close <= open + 1 ? "none" : details.substring(open + 1, close);
    return Sanitize.text(policy, MAX_REASON_CHARS);
  }

  /** A name Envoy wrote of the peer's certificate, made safe and bounded; null when empty. */
  private static String name(String s) {
    if (s == null) {
      return null;
    }
    String n = Sanitize.text(s, MAX_NAME_CHARS);
    return n.isBlank() ? null : n;
  }

  /** {@code %START_TIME%}'s default, RFC 3339 with milliseconds in UTC; null when unset. */
  private static Instant time(String text) {
    if (text == null) {
      return null;
    }
    try {
      return OffsetDateTime.parse(text.toUpperCase(Locale.ROOT)).toInstant();
    } catch (DateTimeException e) {
      return SourceLine.UNREADABLE_TIME;
    }
  }

  private static void put(Map<String, String> m, String k, String v) {
    if (v != null) {
      m.put(k, v);
    }
  }
}
