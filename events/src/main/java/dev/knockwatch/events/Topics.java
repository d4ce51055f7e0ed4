package dev.knockwatch.events;

import java.util.List;
import java.util.Map;

/** Every topic knockwatch uses, declared once: name, partitions, configs, and what it holds. */
public final class Topics {

  /** One topic: the broker creates it with these partitions and configs when it is missing. */
  public record Topic(String name, int partitions, Map<String, String> configs, String key, String value) {}

  /**
   * How long a consumer's fetch waits at the broker when there is nothing to read: a record ends
   * the wait at once, so a page never waits for it; an idle process asks the broker twice a second
   * less. Every long-lived consumer of these topics takes it.
   */
  public static final int IDLE_FETCH_WAIT_MS = 2_000;

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
