package dev.knockwatch.ingest.formats.json;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.HostClassifier;
import dev.knockwatch.events.HostClassifier.HostPort;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Redactor;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.spi.Attribution;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.Rejection;
import dev.knockwatch.ingest.spi.SourceLine;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * JSON access logs (Envoy's JSON format or any JSON lines), read through a field mapping from
 * the source config: each event field names a dotted path in the line, e.g.
 * {@code commandId: request_headers.x-command-id}, {@code authority: authority},
 * {@code status: response_code}. Lines whose status is a refusal (default 403 and 407) become
 * events; others are skipped and counted. Without a {@code status} mapping every line is one.
 */
public final class JsonAccessLogParser implements LineParser {

  /** The event fields a mapping may fill. */
  public static final Set<String> FIELDS = Set.of("commandId", "agentId", "host", "port", "authority", "method",
      "url", "status", "reason", "proxyError", "timestamp");

  private final Map<String, String> mapping;
  private final Set<Integer> refusedStatuses;

  public JsonAccessLogParser(Map<String, String> mapping, Set<Integer> refusedStatuses) {
    for (String key : mapping.keySet()) {
      if (!FIELDS.contains(key)) {
        throw new IllegalArgumentException("unknown mapping field \"" + key + "\" (known: " + String.join(", ",
            FIELDS.stream().sorted().toList()) + ")");
      }
    }
    this.mapping = Map.copyOf(mapping);
    this.refusedStatuses = Set.copyOf(refusedStatuses);
  }

  /** Its formats (or mapping) are immutable, and each line is read alone. */
  @Override
  public boolean linesStandAlone() {
    return true;
  }

  @Override
  public Parsed parse(SourceLine src) {
    JsonNode root;
    try {
      root = Json.MAPPER.readTree(src.text());
    } catch (JsonProcessingException e) {
      return Parsed.rejected(Rejection.UNPARSEABLE, "not a JSON object: " + Sanitize.text(e.getOriginalMessage(), 200));
    }
    if (root == null || !root.isObject()) {
      return Parsed.rejected(Rejection.UNPARSEABLE, "not a JSON object");
    }
    Optional<String> status = field(root, "status");
    if (mapping.containsKey("status")) {
      Integer code = status.flatMap(JsonAccessLogParser::integer).orElse(null);
      if (code == null) {
        return Parsed.rejected(Rejection.UNPARSEABLE, "no status at " + mapping.get("status"));
      }
      if (!refusedStatuses.contains(code)) {
        return Parsed.skipped("allowed");
      }
    }
    // docs/TRUST.md: a mapped agentId is the operator's word (a field the proxy fills from the
    // client's authenticated identity), so it names the agent; a mapped commandId is the client's claim
    String agentId = mapping.containsKey("agentId") ? field(root, "agentId").orElse(null) : src.agentIdFromPath();
    Attribution.Result who = Attribution.of(agentId, src.commandIdFromPath(), null, field(root, "commandId").orElse(null));
    if (who instanceof Attribution.Refused r) {
      return Parsed.rejected(r.code(), r.reason() + (r.code() == Rejection.BAD_AGENT_ID ? " (at " + mapping.get("agentId") + ")"
          : mapping.containsKey("commandId") ? " (at " + mapping.get("commandId") + ")" : ""));
    }
    Optional<String> url = field(root, "url");
    Optional<HostPort> target = field(root, "host").map(h -> new HostPort(HostClassifier.canonical(h),
        field(root, "port").flatMap(JsonAccessLogParser::integer).orElse(null)))
        .or(() -> field(root, "authority").flatMap(HostClassifier::hostPort))
        .or(() -> url.flatMap(HostClassifier::fromUrl));
    ViolationEvent.Builder b = ((Attribution.Attributed) who).applyTo(src.newEvent())
        .source(JsonAccessLogFormat.NAME)
        .kind(Kind.NETWORK)
        .action("http-request")
        .method(field(root, "method").map(m -> Sanitize.text(m, 16)).orElse(null))
        .url(url.map(u -> Redactor.safe(u, 1024)).orElse(null))
        .reason(field(root, "reason").map(r -> Sanitize.text(r, 1024))
            .orElse(status.map(s -> "refused with status " + Sanitize.text(s, 8)).orElse(null)))
        .proxyError(field(root, "proxyError").map(p -> Sanitize.text(p, 200)).orElse(null))
        .observedAt(field(root, "timestamp").map(t -> instant(t).orElse(SourceLine.UNREADABLE_TIME)).orElse(null))
;
    target.ifPresent(hp -> b.host(hp.host()).port(hp.port()).addressClass(HostClassifier.classify(hp.host()).orElse(null)));
    return Parsed.of(b.build());
  }

  /** The text at the field's dotted path ({@code a.b.c}); keys holding dots are matched whole first. */
  private Optional<String> field(JsonNode root, String name) {
    String path = mapping.get(name);
    if (path == null) {
      return Optional.empty();
    }
    JsonNode n = root.has(path) ? root.get(path) : root;
    if (!root.has(path)) {
      for (String part : List.of(path.split("\\."))) {
        n = n == null ? null : n.get(part);
      }
    }
    if (n == null || n.isNull() || n.isContainerNode()) {
      return Optional.empty();
    }
    String text = n.asText();
    return text.isEmpty() || text.equals("-") ? Optional.empty() : Optional.of(text);
  }

  private static Optional<Integer> integer(String s) {
    try {
      return Optional.of(Integer.parseInt(s.strip()));
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
  }


  /** ISO-8601 with an offset (Envoy's START_TIME), or epoch seconds / milliseconds. */
  private static Optional<Instant> instant(String s) {
    try {
      return Optional.of(OffsetDateTime.parse(s).toInstant());
    } catch (DateTimeParseException e) {
      try {
        double v = Double.parseDouble(s);
        return Optional.of(v > 1e11 ? Instant.ofEpochMilli((long) v) : Instant.ofEpochMilli((long) (v * 1000)));
      } catch (NumberFormatException e2) {
        return Optional.empty();
      }
    }
  }
}
