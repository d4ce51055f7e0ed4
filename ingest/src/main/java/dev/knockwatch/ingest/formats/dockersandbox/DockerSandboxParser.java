package dev.knockwatch.ingest.formats.dockersandbox;

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
import java.util.regex.Pattern;

/**
 * One line of a Docker Sandboxes audit file: one record, a JSON object (docs.docker.com, "Audit
 * record reference"). Only an evaluation's {@code AUDIT_DECISION_DENY} of network egress is a
 * refusal; who was refused is what the source's {@code agents} map the record's signed-in user, AI
 * agent and machine to. The records name no command and no sandbox.
 *
 * <p>Shapes by schema version, as Docker's docs show them: 1.80.0 ({@code sbx} v0.30.0) names the
 * host alone in {@code resource_id} and the user's account UUID in {@code username}; 1.82.0
 * (v0.31.0) on write {@code host:port}, the Docker Hub username, and {@code agent}; 1.216.0
 * (v0.46.0) adds {@code enforcement_mode} and the {@code http_request} payload (its port a string,
 * an IPv6 host without brackets). {@code deny_reason} is a list of phrases in all of them.
 */
final class DockerSandboxParser implements LineParser {

  static final String EVALUATION = "AUDIT_CATEGORY_EVALUATION";
  static final String NETWORK_EGRESS = "network_egress";
  static final String HTTP_REQUEST = "http_request";
  private static final Pattern METHOD = Pattern.compile("[A-Z]{1,16}");
  private static final int MAX_NAME_CHARS = 128;
  private static final int MAX_REASONS = 16;

  private final Identities agents;

  DockerSandboxParser(Identities agents) {
    this.agents = agents;
  }

  /** Its mapping is fixed, and each line is read alone. */
  @Override
  public boolean linesStandAlone() {
    return true;
  }

  @Override
  public Parsed parse(SourceLine src) {
    JsonLine line = JsonLine.read(src.text());
    if (line.object() == null) {
      return line.rejected();
    }
    JsonNode r = line.object();
    String category = string(r, "category");
    if (category == null) {
      return Parsed.rejected(Rejection.UNPARSEABLE, "no audit record: it has no category");
    }
    switch (category) {
      case "AUDIT_CATEGORY_MANAGEMENT":
        return Parsed.skipped("management");
      case "AUDIT_CATEGORY_EXECUTION":
        return Parsed.skipped("execution");
      case EVALUATION:
        break;
      default:
        return Parsed.rejected(Rejection.UNPARSEABLE, "an audit record of an unknown category: "
            + Sanitize.text(category, 64));
    }
    String decision = string(r, "decision");
    if (decision == null) {
      return Parsed.rejected(Rejection.UNPARSEABLE, "an evaluation record with no decision");
    }
    switch (decision) {
      case "AUDIT_DECISION_ALLOW":
        return Parsed.skipped("allowed");
      case "AUDIT_DECISION_APPROVAL_REQUIRED":
        return Parsed.skipped("approval-required");
      case "AUDIT_DECISION_APPROVAL_ALLOW", "AUDIT_DECISION_APPROVAL_DENY":
        return Parsed.skipped("approval-answer");
      case "AUDIT_DECISION_DENY":
        break;
      default:
        return Parsed.rejected(Rejection.UNPARSEABLE, "an evaluation record of an unknown decision: "
            + Sanitize.text(decision, 64));
    }
    String action = string(r, "action_type");
    if (action == null) {
      return Parsed.rejected(Rejection.UNPARSEABLE, "a denial with no action_type");
    }
    if (!action.equals(NETWORK_EGRESS) && !action.equals(HTTP_REQUEST)) {
      return Parsed.skipped("other-action");
    }
    // absent before 1.216.0, and from records that resolve an approval; "off" is the local policy's own denial
    JsonNode mode = r.get("enforcement_mode");
    boolean enforced = true;
    if (mode != null && !mode.isNull()) {
      String m = mode.isTextual() ? mode.textValue() : null;
      enforced = !"audit".equals(m); // audit: Docker recorded the denial and let the action through
      if (enforced && !"enforce".equals(m) && !"off".equals(m)) {
        return Parsed.rejected(Rejection.UNPARSEABLE, "a denial under an unknown enforcement_mode: "
            + Sanitize.text(String.valueOf(m == null ? mode : m), 64), time(string(r, "timestamp")));
      }
    }
    return refusal(src, r, action.equals(HTTP_REQUEST), enforced);
  }

  private Parsed refusal(SourceLine src, JsonNode r, boolean http, boolean enforced) {
    Instant at = time(string(r, "timestamp"));
    String username = name(string(r, "username"));
    String email = name(string(r, "user_email"));
    String agent = name(string(r, "agent"));
    String hostname = name(string(r, "hostname"));
    Map<String, String> knows = new LinkedHashMap<>();
    put(knows, "username", username);
    put(knows, "user_email", email);
    put(knows, "ai_agent", agent);
    put(knows, "hostname", hostname);
    String user = username != null ? "username=" + username : email != null ? "user_email=" + email : null;
    String identity = user == null && agent == null ? "no-identity"
        : (user == null ? "" : user) + (user != null && agent != null ? " " : "") + (agent == null ? "" : "agent=" + agent);
    Attribution.Result who = Attribution.ofWall(DockerSandboxFormat.NAME, identity, knows, agents);
    if (who instanceof Attribution.Refused refused) {
      return new Parsed.Rejected(refused.code(), refused.reason(), at, refused.identity());
    }

    JsonNode payload = http ? r.get(HTTP_REQUEST) : null;
    HostClassifier.HostPort target = http ? fromPayload(payload) : null;
    if (target == null) {
      target = fromResourceId(string(r, "resource_id"));
    }
    String reason = reason(r.get("deny_reason"));
    ViolationEvent.Builder b = src.newEvent().agentId(((Attribution.Attributed) who).agentId()).commandUnknown(true)
        .source(DockerSandboxFormat.NAME).kind(Kind.NETWORK).action(http ? "http-request" : "network-outbound")
        .reason(reason)
        .subject(new ViolationEvent.Subject(DockerSandboxFormat.NAME, identity))
        .enforced(enforced ? null : false)
        .observedAt(at);
    if (http) {
      b.method(method(string(payload, "method")));
      String path = string(payload, "path");
      b.url(path == null || path.isEmpty() ? null : Redactor.safe(path, Sanitize.MAX_URL_CHARS));
    } else {
      JsonNode egress = r.get(NETWORK_EGRESS);
      String protocol = egress == null ? null : string(egress, "protocol");
      b.protocol(protocol == null || protocol.isBlank() ? null
          : Sanitize.text(protocol.strip().toLowerCase(Locale.ROOT), Sanitize.MAX_WORD_CHARS));
    }
    if (target == null) {
      b.targetUnknown(true);
    } else {
      b.host(target.host()).port(target.port()).addressClass(HostClassifier.classify(target.host()).orElse(null));
    }
    return Parsed.of(b.build());
  }

  /** The {@code http_request} payload's host and port: the host as written (an IPv6 one without brackets), the port a string. */
  private static HostClassifier.HostPort fromPayload(JsonNode payload) {
    String host = payload == null ? null : string(payload, "host");
    if (host == null || host.isBlank()) {
      return null;
    }
    JsonNode p = payload.get("port");
    Integer port = null;
    if (p != null && (p.isTextual() || p.isIntegralNumber())) {
      String digits = p.asText();
      if (digits.matches("[0-9]{1,5}") && Integer.parseInt(digits) <= 65_535) {
        port = Integer.parseInt(digits);
      }
    }
    return new HostClassifier.HostPort(HostClassifier.canonical(host), port);
  }

  /**
   * {@code resource_id}'s host and port ({@code host:port}; the host alone before schema 1.82.0).
   * Docker does not say how it writes an IPv6 address there: one with several colons and no
   * brackets has no telling where its port starts, and names no target.
   */
  private static HostClassifier.HostPort fromResourceId(String id) {
    if (id == null || id.isBlank()) {
      return null;
    }
    String t = id.strip();
    if (!t.startsWith("[") && t.indexOf(':') != t.lastIndexOf(':')) {
      return null;
    }
    return HostClassifier.hostPort(t).orElse(null);
  }

  /** {@code deny_reason}'s phrases (a list; a lone string read alike), joined, made safe and bounded; null when none. */
  private static String reason(JsonNode reasons) {
    if (reasons == null) {
      return null;
    }
    StringBuilder b = new StringBuilder();
    if (reasons.isTextual()) {
      b.append(reasons.textValue().strip());
    } else if (reasons.isArray()) {
      int n = 0;
      for (JsonNode phrase : reasons) {
        if (phrase.isTextual() && !phrase.textValue().isBlank() && n++ < MAX_REASONS) {
          b.append(b.length() == 0 ? "" : "; ").append(phrase.textValue().strip());
        }
        if (b.length() > Sanitize.MAX_TEXT_CHARS) {
          break;
        }
      }
    }
    return b.length() == 0 ? null : Sanitize.text(b.toString(), Sanitize.MAX_TEXT_CHARS);
  }

  /** {@code HTTP_METHOD_POST} is {@code POST}; anything else is no method. */
  private static String method(String m) {
    if (m == null || !m.startsWith("HTTP_METHOD_")) {
      return null;
    }
    String verb = m.substring("HTTP_METHOD_".length());
    return METHOD.matcher(verb).matches() ? verb : null;
  }

  /** A name the daemon wrote (a user, an e-mail address, an agent, a machine) made safe and bounded; null when empty. */
  private static String name(String s) {
    if (s == null || s.isEmpty()) {
      return null;
    }
    String n = Sanitize.text(s, MAX_NAME_CHARS);
    return n.isBlank() ? null : n;
  }

  /** The record's {@code timestamp}, RFC 3339 in UTC with microseconds; null when absent. */
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

  private static String string(JsonNode r, String key) {
    JsonNode v = r == null ? null : r.get(key);
    return v == null || !v.isTextual() ? null : v.textValue();
  }

  private static void put(Map<String, String> m, String k, String v) {
    if (v != null) {
      m.put(k, v);
    }
  }
}
