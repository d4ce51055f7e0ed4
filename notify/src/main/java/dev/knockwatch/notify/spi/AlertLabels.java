package dev.knockwatch.notify.spi;

import dev.knockwatch.events.Alert;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/** An alert as Alertmanager's labels: what route matchers match, and what an Alertmanager receives. */
public final class AlertLabels {

  private AlertLabels() {}

  /**
   * The labels of an alert, in a fixed order, absent fields left out: alertname (the rule),
   * severity (lower case), agent, role, command, {@code source=knockwatch}, then the rule's own
   * labels (never overriding these). What matchers match and what Alertmanager receives.
   */
  public static Map<String, String> of(Alert a) {
    Map<String, String> labels = new LinkedHashMap<>();
    put(labels, "alertname", a.rule());
    put(labels, "severity", a.severity() == null ? null : a.severity().name().toLowerCase(Locale.ROOT));
    put(labels, "agent", a.agentId());
    put(labels, "role", a.role());
    put(labels, "command", a.commandId());
    labels.put("source", "knockwatch");
    if (a.meta() != null) {
      new TreeMap<>(a.meta().labels()).forEach(labels::putIfAbsent);
    }
    return labels;
  }

  private static void put(Map<String, String> labels, String name, String value) {
    if (value != null && !value.isEmpty()) {
      labels.put(name, value);
    }
  }
}
