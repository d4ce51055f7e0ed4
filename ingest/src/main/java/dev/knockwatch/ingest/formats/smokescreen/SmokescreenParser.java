package dev.knockwatch.ingest.formats.smokescreen;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.AgentId;
import dev.knockwatch.events.HostClassifier;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.ProbeAgents;
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
 * One line of smokescreen's log: logrus JSON, one object a line. Only its
 * {@code CANONICAL-PROXY-DECISION} lines are decisions; of them a denied one ({@code "allow":false},
 * or a refusal before any decision: no {@code allow}, an {@code error}, level {@code warning}) is a
 * refusal. Who was refused is what the source's {@code agents} map smokescreen's knowledge of the
 * client to: the role and project its ACL decided, the client certificate's CN and OU, the client's
 * address. The command is unknown.
 *
 * <p>Field names by version (pkg/smokescreen/smokescreen.go): v0.0.3 on write
 * {@code inbound_remote_addr} and, with a client certificate, {@code inbound_remote_x509_cn} and
 * {@code _ou}; v0.0.2 wrote {@code source_addr}, {@code src_host_common_name} and
 * {@code src_host_organization_unit}, the last two {@code unknown} when the client showed no
 * certificate.
 */
final class SmokescreenParser implements LineParser {

  static final String DECISION = "CANONICAL-PROXY-DECISION";
  /** What v0.0.2 wrote for the certificate's names when the client showed none. */
  private static final String V002_NO_CERTIFICATE = "unknown";
  private static final int MAX_NAME_CHARS = 128;

  private final Identities agents;
  private final String agentPerRole;

  SmokescreenParser(Identities agents, String agentPerRole) {
    this.agents = agents;
    this.agentPerRole = agentPerRole;
  }

  /** Its mapping is fixed, and each line is read alone. */
  @Override
  public boolean linesStandAlone() {
    return true;
  }

  @Override
  public Parsed parse(SourceLine src) {
    String text = src.text();
    if (!text.startsWith("{")) {
      return Parsed.skipped("not-json");
    }
    JsonLine line = JsonLine.read(text);
    if (line.object() == null) {
      return line.rejected();
    }
    JsonNode root = line.object();
    if (!DECISION.equals(string(root, "msg"))) {
      return Parsed.skipped("other-message");
    }
    JsonNode allow = root.get("allow");
    String error = string(root, "error");
    if (allow == null) {
      // a refusal before any decision (a destination hostport could not read): logged at warning, with its error
      if (error == null) {
        return Parsed.rejected(Rejection.UNPARSEABLE, "a " + DECISION + " line with neither allow nor error");
      }
      return warning(string(root, "level")) ? refusal(src, root, error, true) : Parsed.skipped("failed");
    }
    if (!allow.isBoolean()) {
      return Parsed.rejected(Rejection.UNPARSEABLE, "a " + DECISION + " line whose allow is no boolean");
    }
    if (allow.booleanValue()) {
      if (error != null) {
        return Parsed.skipped("failed");
      }
      JsonNode wouldDeny = root.get("enforce_would_deny");
      if (wouldDeny == null || !wouldDeny.asBoolean(false)) {
        return Parsed.skipped("allowed");
      }
      // its role's report policy let it through; enforce would have denied it
      String reason = string(root, "decision_reason");
      return refusal(src, root, reason, false);
    }
    String reason = string(root, "decision_reason");
    return refusal(src, root, reason != null && !reason.isEmpty() ? reason : error, true);
  }

  /** logrus writes {@code warning}; a {@code WARN} of another logger means the same. */
  private static boolean warning(String level) {
    return level != null && (level.equalsIgnoreCase("warning") || level.equalsIgnoreCase("warn"));
  }

  private Parsed refusal(SourceLine src, JsonNode r, String reason, boolean enforced) {
    Instant at = time(string(r, "time"));
    String role = name(string(r, "role"));
    String project = name(string(r, "project"));
    String cn = name(certificateName(r, "inbound_remote_x509_cn", "src_host_common_name"));
    String ou = name(certificateName(r, "inbound_remote_x509_ou", "src_host_organization_unit"));
    String remote = string(r, "inbound_remote_addr");
    if (remote == null) {
      remote = string(r, "source_addr");
    }
    HostClassifier.HostPort client = remote == null ? null : HostClassifier.hostPort(remote)
        .filter(h -> HostClassifier.isIpLiteral(h.host())).orElse(null);
    String address = client == null ? null : client.host();

    Map<String, String> knows = new LinkedHashMap<>();
    put(knows, "role", role);
    put(knows, "project", project);
    put(knows, "inbound_remote_x509_cn", cn);
    put(knows, "inbound_remote_x509_ou", ou);
    put(knows, "inbound_remote_addr", address);
    String identity = role != null ? "role=" + role : cn != null ? "cn=" + cn : address != null ? "src=" + address
        : "no-identity";
    Attribution.Result who = Attribution.ofWall(SmokescreenFormat.NAME, identity, knows, agents);
    String agent = who instanceof Attribution.Attributed a ? a.agentId() : agentOfRole(role);
    if (agent == null) {
      Attribution.Refused refused = (Attribution.Refused) who;
      return new Parsed.Rejected(refused.code(), refused.reason(), at, refused.identity());
    }

    boolean connect = "connect".equals(string(r, "proxy_type"));
    Optional<HostClassifier.HostPort> target = HostClassifier.hostPort(string(r, "requested_host"));
    ViolationEvent.Builder b = src.newEvent().agentId(agent).commandUnknown(true).source(SmokescreenFormat.NAME)
        .kind(Kind.NETWORK).action(connect ? "http-connect" : "http-request").method(connect ? "CONNECT" : null)
        .sourceAddress(address).sourcePort(client == null ? null : client.port())
        .reason(reason == null || reason.isBlank() ? null : Sanitize.text(reason.strip(), 1024))
        .subject(new ViolationEvent.Subject(SmokescreenFormat.NAME, identity))
        .enforced(enforced ? null : false)
        .observedAt(at);
    target.ifPresentOrElse(
        h -> b.host(h.host()).port(h.port()).addressClass(HostClassifier.classify(h.host()).orElse(null)),
        () -> b.targetUnknown(true));
    return Parsed.of(b.build());
  }

  /**
   * Where the source asks for it ({@code agentPerRole}), the agent named after smokescreen's role: the
   * prefix keeps it apart from every other agent, and knockwatch's own probes' agents are never one.
   */
  private String agentOfRole(String role) {
    if (agentPerRole == null || role == null) {
      return null;
    }
    String agent = agentPerRole + role;
    return AgentId.problem(agent).isEmpty() && !ProbeAgents.is(agent) ? agent : null;
  }

  /** The name under its current key, else its v0.0.2 key (where {@code unknown} stood for no certificate). */
  private static String certificateName(JsonNode r, String key, String v002Key) {
    String v = string(r, key);
    if (v != null) {
      return v;
    }
    v = string(r, v002Key);
    return V002_NO_CERTIFICATE.equals(v) ? null : v;
  }

  /** A name smokescreen wrote (a role, a project, a certificate's CN or OU) made safe and bounded; null when empty. */
  private static String name(String s) {
    if (s == null || s.isEmpty()) {
      return null;
    }
    String n = Sanitize.text(s, MAX_NAME_CHARS);
    return n.isBlank() ? null : n;
  }

  /** logrus's JSON time, RFC 3339 (seconds, or nanoseconds where the formatter asks); null when absent. */
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
    JsonNode v = r.get(key);
    return v == null || !v.isTextual() ? null : v.textValue();
  }

  private static void put(Map<String, String> m, String k, String v) {
    if (v != null) {
      m.put(k, v);
    }
  }
}
