package dev.knockwatch.events;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;

/** Every topic knockwatch uses, declared once: name, partitions, configs, and what it holds. */
public final class Topics {

  /** One topic: the broker creates it with these partitions and configs when it is missing. */
  public record Topic(String name, int partitions, Map<String, String> configs, String key, String value) {}

  /**
   * How long a consumer's fetch waits at the broker when there is nothing to read (500 ms by
   * default): a record ends the wait at once, so a page never waits for it; an idle process asks
   * the broker a tenth as often. Partitions newly assigned to a subscribed consumer are fetched once
   * the wait ends. Every long-lived consumer of these topics takes it.
   */
  public static final int IDLE_FETCH_WAIT_MS = 5_000;

  /**
   * How often a group member heartbeats to its coordinator: 3 s by default, a request each, as many
   * as an idle member's fetches. A member hears of a rebalance in its heartbeat's answer, so the
   * others join one up to this late.
   */
  public static final int HEARTBEAT_INTERVAL_MS = 5_000;

  /**
   * {@link #HEARTBEAT_INTERVAL_MS}, or a third of the session timeout the user set if that is less
   * (Kafka's rule: three heartbeats a session); empty when the user set the interval, which stands.
   * {@code prefixes}: where else a setting may be given ({@code "main.consumer."} for a Streams app).
   */
  public static OptionalInt heartbeatIntervalMs(Map<String, Object> clientProps, String... prefixes) {
    List<String> at = new ArrayList<>(List.of(""));
    at.addAll(List.of(prefixes));
    int interval = HEARTBEAT_INTERVAL_MS;
    for (String prefix : at) {
      if (clientProps.containsKey(prefix + "heartbeat.interval.ms")) {
        return OptionalInt.empty();
      }
      Object session = clientProps.get(prefix + "session.timeout.ms");
      if (session != null) {
        interval = Math.min(interval, Integer.parseInt(session.toString().trim()) / 3);
      }
    }
    return OptionalInt.of(interval);
  }

  /**
   * The same for a consumer whose partitions are its own for its life (assigned, never subscribed:
   * the apps' global consumers, the notifier's silences): no new assignment waits for its fetch to
   * come back, as one after a rebalance waits for a subscribed consumer's, so it may wait longer.
   */
  public static final int ASSIGNED_FETCH_WAIT_MS = 10_000;

  /**
   * How long a client waits for a node's answer before it gives up on that request, drops the
   * connection and looks up each partition's leader again. A node that stops answering without
   * closing its connections (SIGSTOP, a frozen VM, a lost route) holds every request sent to it
   * until then, and its partitions' new leaders are found only then: Kafka's default, 30 s, was
   * the whole failover budget. The producers and the consumers on a page's path take this; a
   * consumer whose fetch waits {@link #ASSIGNED_FETCH_WAIT_MS} at the broker keeps Kafka's default,
   * which must exceed that wait.
   */
  public static final int REQUEST_TIMEOUT_MS = 10_000;

  private static final Map<String, String> COMPACTED = Map.of("cleanup.policy", "compact");
  /** Partitions of the keyed topics (violations, alerts, notifications) unless {@code topics --partitions} says otherwise. */
  public static final int DEFAULT_KEYED_PARTITIONS = 6;

  public static final Topic VIOLATIONS = new Topic("knockwatch.violations", DEFAULT_KEYED_PARTITIONS, Map.of(),
      "commandId", "ViolationEvent JSON (schema 1)");
  /**
   * The refusals again, keyed by the grain a rule counts at ({@code per: task | session | agent}):
   * what the detection app repartitions through, so that the tool calls of one task (each its own
   * command, on any partition of {@link #VIOLATIONS}) meet in one state. As many partitions as
   * {@link #VIOLATIONS}.
   */
  public static final Topic BY_GRAIN = new Topic("knockwatch.violations.by-grain", DEFAULT_KEYED_PARTITIONS, Map.of(),
      "grain key (task:agent/session/task, session:agent/session, agent:agent)", "ViolationEvent JSON (schema 1)");
  public static final Topic REJECTED = new Topic("knockwatch.violations.rejected", 1, Map.of(),
      "source file:offset", "RejectedLine JSON: the line, the reason, where it came from");
  /**
   * Raw lines as a log shipper (rsyslog, syslog-ng, Vector, Fluent Bit, Filebeat) carries them,
   * keyed by the file's path so one file's lines stay in order on one partition; read by
   * {@code ingest --raw-topic} (docs/FORMATS.md "Raw lines from your shipper").
   */
  public static final Topic RAW = new Topic("knockwatch.raw", DEFAULT_KEYED_PARTITIONS, Map.of(),
      "the file's path", "a JSON object: the line, its file's path, the host, the shipper's offset");
  public static final Topic POLICY = new Topic("knockwatch.policy", 1, COMPACTED,
      "role or agent pattern", "role definitions");
  public static final Topic ALERTS = new Topic("knockwatch.alerts", DEFAULT_KEYED_PARTITIONS, Map.of(),
      "alert fingerprint", "Alert JSON (firing / resolved)");
  public static final Topic SILENCES = new Topic("knockwatch.silences", 1, COMPACTED,
      "silence id", "Silence JSON");
  /** Co-partitioned with {@link #ALERTS} (an alert's records on the partition of its alert) and compacted. */
  public static final Topic NOTIFICATIONS = new Topic("knockwatch.notifications", DEFAULT_KEYED_PARTITIONS, COMPACTED,
      "receiver, alert fingerprint and kind (sent, intent, other)", "delivery record");

  public static final List<Topic> ALL =
      List.of(VIOLATIONS, BY_GRAIN, REJECTED, RAW, POLICY, ALERTS, SILENCES, NOTIFICATIONS);

  private Topics() {}
}
