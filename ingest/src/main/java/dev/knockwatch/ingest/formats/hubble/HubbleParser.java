package dev.knockwatch.ingest.formats.hubble;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.HostClassifier;
import dev.knockwatch.events.Kind;
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
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * One line of Hubble's flow JSON. Go's protojson writes it with the proto's own field names
 * ({@code UseProtoNames}: {@code drop_reason_desc}, {@code pod_name}, {@code IP}, {@code l4},
 * {@code TCP}, {@code ipVersion}), enums by name, 64-bit integers as strings. A line of
 * {@code hubble observe -o json} or of the exporter holds its flow under {@code flow}; a legacy
 * line ({@code HUBBLE_COMPAT=legacy-json-output}) is the flow itself.
 *
 * <p>Only a {@code DROPPED} flow whose drop reason is policy's is a refusal: {@code POLICY_DENIED}
 * (133, no rule allowed it) or {@code POLICY_DENY} (181, a deny rule matched), the numbers
 * pkg/monitor/api/drop.go gives them. Who knocked is the flow's {@code source}, whichever side
 * dropped it: an egress drop at the sending pod, an ingress drop at the pod it tried to reach.
 */
final class HubbleParser implements LineParser {

  private static final Set<String> POLICY_DROPS = Set.of("POLICY_DENIED", "POLICY_DENY");
  private static final Map<Integer, String> POLICY_DROP_NUMBERS = Map.of(133, "POLICY_DENIED", 181, "POLICY_DENY");
  private static final Set<String> LET_THROUGH = Set.of("FORWARDED", "REDIRECTED", "TRACED", "TRANSLATED");
  private static final Set<String> OTHER_EVENTS = Set.of("node_status", "lost_events", "agent_event", "debug_event");
  private static final int MAX_NAME_CHARS = 253;
  private static final int MAX_LABELS = 64;
  private static final int MAX_POLICIES = 8;

  private final Identities agents;

  HubbleParser(Identities agents) {
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
    if (!text.startsWith("{")) {
      return Parsed.skipped("not-json");
    }
    JsonLine line = JsonLine.read(text);
    if (line.object() == null) {
      return line.rejected();
    }
    JsonNode root = line.object();
    JsonNode flow = root.get("flow");
    if (flow == null) {
      for (String other : OTHER_EVENTS) {
        if (root.has(other)) {
          return Parsed.skipped("other-event");
        }
      }
      if (!root.has("verdict") && !root.has("IP") && !root.has("source")) {
        return Parsed.rejected(Rejection.UNPARSEABLE, "a JSON line that holds no flow");
      }
      flow = root;
    } else if (!flow.isObject()) {
      return Parsed.rejected(Rejection.UNPARSEABLE, "a line whose flow is no object");
    }
    String verdict = string(flow, "verdict");
    if (verdict == null) {
      return Parsed.skipped("other-verdict"); // protojson leaves VERDICT_UNKNOWN out
    }
    if (LET_THROUGH.contains(verdict)) {
      return Parsed.skipped("forwarded");
    }
    if ("AUDIT".equals(verdict)) {
      // policy audit mode let it through: what enforcement would drop (flow.proto's Verdict AUDIT)
      return refusal(src, flow, "AUDIT", time(string(flow, "time"), string(root, "time")), false);
    }
    if (!"DROPPED".equals(verdict)) {
      return Parsed.skipped("other-verdict");
    }
    String drop = dropReason(flow);
    if (drop == null || !POLICY_DROPS.contains(drop)) {
      return Parsed.skipped("other-drop");
    }
    Instant at = time(string(flow, "time"), string(root, "time"));
    return refusal(src, flow, drop, at, true);
  }

  /** {@code drop_reason_desc} by name; a flow with only the deprecated number ({@code drop_reason}) by that. */
  private static String dropReason(JsonNode flow) {
    JsonNode desc = flow.get("drop_reason_desc");
    if (desc != null && desc.isTextual()) {
      return desc.textValue();
    }
    JsonNode number = desc != null && desc.isIntegralNumber() ? desc : flow.get("drop_reason");
    return number != null && number.isIntegralNumber() ? POLICY_DROP_NUMBERS.get(number.intValue()) : null;
  }

  private Parsed refusal(SourceLine src, JsonNode flow, String drop, Instant at, boolean enforced) {
    JsonNode ip = object(flow, "IP");
    JsonNode from = object(flow, "source");
    String sourceIp = address(string(ip, "source"));
    String destinationIp = address(string(ip, "destination"));
    String namespace = name(string(from, "namespace"));
    String pod = name(string(from, "pod_name"));
    String identityNumber = number(from, "identity");
    List<String> labels = new ArrayList<>();
    JsonNode ls = from == null ? null : from.get("labels");
    if (ls != null && ls.isArray()) {
      for (JsonNode l : ls) {
        if (l.isTextual() && labels.size() < MAX_LABELS) {
          labels.add(Sanitize.text(l.textValue(), MAX_NAME_CHARS));
        }
      }
    }

    Map<String, List<String>> knows = new LinkedHashMap<>();
    put(knows, "namespace", namespace);
    put(knows, "pod_name", pod);
    if (!labels.isEmpty()) {
      knows.put("label", labels);
    }
    put(knows, "identity", identityNumber);
    put(knows, "source_ip", sourceIp);
    String identity = pod != null ? "pod=" + (namespace == null ? "" : namespace + "/") + pod
        : identityNumber != null ? "identity=" + identityNumber
        : sourceIp != null ? "src=" + sourceIp : "no-identity";
    Attribution.Result who = Attribution.ofWallAny(HubbleFormat.NAME, identity, knows, agents);
    if (who instanceof Attribution.Refused r) {
      return new Parsed.Rejected(r.code(), r.reason(), at, r.identity());
    }
    String agent = ((Attribution.Attributed) who).agentId();

    JsonNode l4 = object(flow, "l4");
    String protocol = null;
    JsonNode ports = null;
    for (String p : new String[] {"TCP", "UDP", "SCTP", "ICMPv4", "ICMPv6"}) {
      JsonNode n = object(l4, p);
      if (n != null) {
        protocol = p.toLowerCase(Locale.ROOT);
        ports = n;
        break;
      }
    }
    boolean icmp = protocol != null && protocol.startsWith("icmp");
    String dnsName = firstName(flow.get("destination_names"));
    String host = dnsName != null ? dnsName : destinationIp;
    String direction = string(flow, "traffic_direction");
    ViolationEvent.Builder b = src.newEvent().agentId(agent).commandUnknown(true).source(HubbleFormat.NAME)
        .kind(Kind.NETWORK).action(action(protocol)).protocol(protocol)
        .sourceAddress(sourceIp).sourcePort(icmp ? null : port(ports, "source_port"))
        .reason(reason(flow, drop, direction))
        .subject(new ViolationEvent.Subject(HubbleFormat.NAME, identity))
        .enforced(enforced ? null : false)
        .observedAt(at);
    if (host == null) {
      b.targetUnknown(true);
    } else {
      b.host(host).port(icmp ? null : port(ports, "destination_port"))
          .addressClass(HostClassifier.classify(destinationIp != null ? destinationIp : host).orElse(null));
    }
    return Parsed.of(b.build());
  }

  /** The direction, the drop reason and the policies that denied it, as Hubble names them. */
  private static String reason(JsonNode flow, String drop, String direction) {
    StringBuilder r = new StringBuilder();
    if ("EGRESS".equals(direction) || "INGRESS".equals(direction)) {
      r.append(direction.toLowerCase(Locale.ROOT)).append(' ');
    }
    r.append(drop);
    List<String> policies = new ArrayList<>();
    for (String key : new String[] {"egress_denied_by", "ingress_denied_by"}) {
      JsonNode ps = flow.get(key);
      if (ps != null && ps.isArray()) {
        for (JsonNode p : ps) {
          String policy = policy(p);
          if (policy != null && policies.size() < MAX_POLICIES) {
            policies.add(policy);
          }
        }
      }
    }
    if (!policies.isEmpty()) {
      r.append(" by ").append(String.join(", ", policies));
    }
    return Sanitize.text(r.toString(), Sanitize.MAX_TEXT_CHARS);
  }

  /** A policy as {@code KIND NAMESPACE/NAME} (Cilium fills what its labels name); null when it names nothing. */
  private static String policy(JsonNode p) {
    if (p == null || !p.isObject()) {
      return null;
    }
    String name = name(string(p, "name"));
    if (name == null) {
      return null;
    }
    String kind = name(string(p, "kind"));
    String namespace = name(string(p, "namespace"));
    return (kind == null ? "" : kind + " ") + (namespace == null ? "" : namespace + "/") + name;
  }

  private static String action(String protocol) {
    if (protocol == null) {
      return "packet";
    }
    return switch (protocol) {
      case "tcp", "sctp" -> "connect";
      case "udp" -> "sendto";
      default -> "icmp";
    };
  }

  /** The first DNS name Cilium's DNS proxy knew for the destination, canonical; null when none is usable. */
  private static String firstName(JsonNode names) {
    if (names == null || !names.isArray() || names.isEmpty() || !names.get(0).isTextual()) {
      return null;
    }
    String n = HostClassifier.canonical(names.get(0).textValue());
    return n == null || n.isBlank() ? null : n;
  }

  /** An IP literal as Hubble writes it, canonical; null for anything else. */
  private static String address(String a) {
    if (a == null || a.isEmpty() || a.length() > 45) {
      return null;
    }
    String c = HostClassifier.canonical(a);
    return HostClassifier.isIpLiteral(c) ? c : null;
  }

  private static Integer port(JsonNode ports, String key) {
    JsonNode p = ports == null ? null : ports.get(key);
    return p != null && p.isIntegralNumber() && p.intValue() > 0 && p.intValue() <= 65_535 ? p.intValue() : null;
  }

  /** A uint32 protojson writes as a number; null when absent or no such number. */
  private static String number(JsonNode n, String key) {
    JsonNode v = n == null ? null : n.get(key);
    return v != null && v.isIntegralNumber() && v.longValue() >= 0 && v.longValue() <= 0xFFFF_FFFFL
        ? Long.toString(v.longValue()) : null;
  }

  /** A name Kubernetes or Cilium wrote made safe and bounded; null when empty. */
  private static String name(String s) {
    if (s == null || s.isEmpty()) {
      return null;
    }
    String n = Sanitize.text(s, MAX_NAME_CHARS);
    return n.isBlank() ? null : n;
  }

  /** protojson's Timestamp: RFC 3339 in UTC; the flow's own, else the line's. */
  private static Instant time(String flowTime, String lineTime) {
    String text = flowTime != null ? flowTime : lineTime;
    if (text == null) {
      return null;
    }
    try {
      return OffsetDateTime.parse(text).toInstant();
    } catch (DateTimeException e) {
      return SourceLine.UNREADABLE_TIME;
    }
  }

  private static JsonNode object(JsonNode n, String key) {
    JsonNode v = n == null ? null : n.get(key);
    return v != null && v.isObject() ? v : null;
  }

  private static String string(JsonNode r, String key) {
    JsonNode v = r == null ? null : r.get(key);
    return v == null || !v.isTextual() ? null : v.textValue();
  }

  private static void put(Map<String, List<String>> m, String k, String v) {
    if (v != null) {
      m.put(k, List.of(v));
    }
  }
}
