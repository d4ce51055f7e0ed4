package dev.knockwatch.notify.spi;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.ConsoleLink;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Sanitize;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * knockwatch's alerts in Alertmanager's shapes, pure: an alert as Alertmanager's API v2 takes it
 * ({@code POST /api/v2/alerts}: labels, annotations, startsAt, endsAt, generatorURL), and a
 * notification as Alertmanager's webhook sends it (version 4), for a {@code webhook} receiver
 * with {@code format: alertmanager}. Two receivers send these shapes (alertmanager and webhook),
 * so they stand here, below both.
 *
 * <p>Labels: {@code alertname} (the rule), {@code severity}, {@code agent}, {@code role},
 * {@code command}, and {@code source="knockwatch"}, then the rule's own {@code labels}; annotations:
 * {@code summary}, {@code target} (the host:port or path), {@code count}, {@code timeline} (the
 * console's link), and the rule's {@code runbook_url}, {@code tags} and own {@code annotations}. Every value the
 * agent may have chosen is stripped of control and bidi characters and bounded. A firing alert
 * ends {@link #FIRING_ENDS_AFTER} after it is sent: knockwatch sends each firing alert again at
 * least every repeatInterval while refusals go on, and resolves it once they stop, so
 * Alertmanager's own resolve timeout never ends it early.
 */
public final class AlertmanagerPayload {

  /** How far ahead a firing alert's endsAt is set. */
  public static final Duration FIRING_ENDS_AFTER = Duration.ofHours(1);
  public static final int MAX_LABEL_CHARS = 256;
  public static final int MAX_ANNOTATION_CHARS = 2_000;
  private static final List<String> GROUP_LABELS = List.of("alertname", "severity", "role", "agent");

  private AlertmanagerPayload() {}

  /** The labels of an alert ({@link AlertLabels}, what routes match), each value sanitized and bounded. */
  public static Map<String, String> labels(Alert a) {
    Map<String, String> labels = new LinkedHashMap<>();
    AlertLabels.of(a).forEach((k, v) -> put(labels, k, v, MAX_LABEL_CHARS));
    return labels;
  }

  /** One alert as {@code POST /api/v2/alerts} takes it, sent at {@code now}. */
  public static ObjectNode alert(Alert a, String publicUrl, Instant now) {
    ObjectNode o = Json.MAPPER.createObjectNode();
    labels(a).forEach(o.putObject("labels")::put);
    annotations(a, publicUrl).forEach(o.putObject("annotations")::put);
    if (a.firstSeen() != null) {
      o.put("startsAt", a.firstSeen().toString());
    }
    o.put("endsAt", (a.status() == Alert.Status.RESOLVED ? now : now.plus(FIRING_ENDS_AFTER)).toString());
    if (publicUrl != null && a.commandId() != null) {
      o.put("generatorURL", ConsoleLink.command(publicUrl, a.commandId()));
    }
    return o;
  }

  /** The body of {@code POST /api/v2/alerts}: every alert of the notification. */
  public static ArrayNode postableAlerts(Notification n, String publicUrl, Instant now) {
    ArrayNode alerts = Json.MAPPER.createArrayNode();
    n.alerts().forEach(a -> alerts.add(alert(a, publicUrl, now)));
    return alerts;
  }

  /** The notification as Alertmanager's webhook (version 4) carries a group. */
  public static ObjectNode webhook(Notification n, String publicUrl, Instant now) {
    ObjectNode body = Json.MAPPER.createObjectNode();
    body.put("version", "4");
    body.put("groupKey", n.key());
    body.put("truncatedAlerts", 0);
    boolean resolved = n.alerts().stream().allMatch(a -> a.status() == Alert.Status.RESOLVED);
    body.put("status", resolved ? "resolved" : "firing");
    body.put("receiver", n.receiver());
    Map<String, String> common = null;
    Map<String, String> commonAnnotations = null;
    for (Alert a : n.alerts()) {
      common = common == null ? new LinkedHashMap<>(labels(a)) : intersect(common, labels(a));
      commonAnnotations = commonAnnotations == null ? new LinkedHashMap<>(annotations(a, publicUrl))
          : intersect(commonAnnotations, annotations(a, publicUrl));
    }
    Map<String, String> commonLabels = common == null ? Map.of() : common;
    ObjectNode groupLabels = body.putObject("groupLabels");
    GROUP_LABELS.stream().filter(commonLabels::containsKey).forEach(k -> groupLabels.put(k, commonLabels.get(k)));
    commonLabels.forEach(body.putObject("commonLabels")::put);
    (commonAnnotations == null ? Map.<String, String>of() : commonAnnotations).forEach(body.putObject("commonAnnotations")::put);
    body.put("externalURL", publicUrl == null ? "" : publicUrl);
    ArrayNode alerts = body.putArray("alerts");
    for (Alert a : n.alerts()) {
      ObjectNode o = alert(a, publicUrl, now);
      ObjectNode withStatus = alerts.addObject();
      withStatus.put("status", a.status() == Alert.Status.RESOLVED ? "resolved" : "firing");
      withStatus.setAll(o);
      withStatus.put("fingerprint", a.fingerprint());
    }
    return body;
  }

  private static Map<String, String> annotations(Alert a, String publicUrl) {
    Map<String, String> annotations = new LinkedHashMap<>();
    put(annotations, "summary", a.summary(), MAX_ANNOTATION_CHARS);
    String target = a.host() == null ? null : a.port() == null ? a.host() : a.host() + ":" + a.port();
    put(annotations, "target", target, MAX_LABEL_CHARS);
    annotations.put("count", String.valueOf(a.count()));
    if (publicUrl != null && a.commandId() != null) {
      annotations.put("timeline", ConsoleLink.command(publicUrl, a.commandId()));
    }
    if (a.meta() != null) {
      if (a.meta().runbook() != null) {
        annotations.put("runbook_url", a.meta().runbook());
      }
      if (a.meta().tags() != null && !a.meta().tags().isEmpty()) {
        annotations.put("tags", String.join(",", a.meta().tags()));
      }
      if (a.meta().annotations() != null) {
        new java.util.TreeMap<>(a.meta().annotations()).forEach(annotations::putIfAbsent);
      }
    }
    return annotations;
  }

  private static void put(Map<String, String> into, String key, String value, int maxChars) {
    if (value != null) {
      into.put(key, Sanitize.text(value, maxChars));
    }
  }

  private static Map<String, String> intersect(Map<String, String> a, Map<String, String> b) {
    a.entrySet().removeIf(e -> !e.getValue().equals(b.get(e.getKey())));
    return a;
  }
}
