package dev.knockwatch.ingest;

import dev.knockwatch.events.Sanitize;
import io.prometheus.client.Collector;
import io.prometheus.client.Counter;
import io.prometheus.client.CounterMetricFamily;
import io.prometheus.client.Gauge;
import io.prometheus.client.Histogram;
import java.util.List;

/** The ingest agent's Prometheus metrics. Labels come from fixed sets only (source, reason code). */
final class IngestMetrics {

  static final Counter LINES = Counter.build()
      .name("knockwatch_ingest_lines_read_total").help("Lines read from sandbox logs.")
      .labelNames("source").register();
  static final Counter BYTES = Counter.build()
      .name("knockwatch_ingest_bytes_read_total").help("Bytes of complete lines read from sandbox logs.")
      .labelNames("source").register();
  static final Counter PUBLISHED = Counter.build()
      .name("knockwatch_ingest_events_published_total").help("Violation events published to Kafka.")
      .labelNames("source").register();
  static final Counter REJECTED = Counter.build()
      .name("knockwatch_ingest_rejected_total").help("Lines sent to the rejected topic, by reason code.")
      .labelNames("source", "reason").register();
  static final Counter INVALID_UTF8 = Counter.build()
      .name("knockwatch_ingest_invalid_utf8_lines_total").help("Lines whose invalid UTF-8 bytes were replaced with U+FFFD.")
      .labelNames("source").register();
  static final Counter LONG_LINES = Counter.build()
      .name("knockwatch_ingest_long_lines_total")
      .help("Lines longer than the bound (64 KiB): their start and end are kept and parsed, the middle left out.")
      .labelNames("source").register();
  static final Counter TIMES_REPLACED = Counter.build()
      .name("knockwatch_ingest_times_replaced_total")
      .help("Events whose line had no time ingest could trust (missing, unreadable, out-of-range, ahead): counted at the ingest time instead.")
      .labelNames("source", "why").register();
  static final Counter IDENTITY_CONFLICTS = Counter.build()
      .name("knockwatch_ingest_identity_conflicts_total")
      .help("Refusals whose line claimed another agentId or commandId than its log layout (docs/TRUST.md): the layout's is kept.")
      .labelNames("source", "field").register();
  static final Counter UNATTRIBUTED = Counter.build()
      .name("knockwatch_ingest_unattributed_refusals_total")
      .help("Refusals rejected for their identity (a directory that is no agent id, a bad command id): a notice goes to detection (rule ingest-rejects).")
      .labelNames("source").register();
  static final Counter SKIPPED = Counter.build()
      .name("knockwatch_ingest_skipped_total").help("Lines that are no refusal (allowed requests, successful calls, noise).")
      .labelNames("source", "reason").register();
  static final Counter PUBLISH_FAILURES = Counter.build()
      .name("knockwatch_ingest_publish_failures_total").help("Batches Kafka did not take (read again).")
      .register();
  static final Counter UNPUBLISHABLE_REPLACED = Counter.build()
      .name("knockwatch_ingest_refused_records_replaced_total")
      .help("Records Kafka refused for themselves (too large, a timestamp it does not take), published as rejected lines instead.")
      .register();
  static final Counter UNPUBLISHABLE = Counter.build()
      .name("knockwatch_ingest_refused_records_lost_total")
      .help("Rejected lines standing in for refused records that Kafka refused too: logged, not published.")
      .register();
  static final Gauge KAFKA_UP = Gauge.build()
      .name("knockwatch_ingest_kafka_up").help("1 while Kafka answers and takes the agent's batches, 0 while it does not (reading is stopped).")
      .register();
  private static volatile boolean publishing = true;
  private static volatile boolean answering = true;

  /** Whether Kafka takes the agent's batches; {@link #KAFKA_UP} is 1 only while it does and answers. */
  static void publishing(boolean up) {
    publishing = up;
    KAFKA_UP.set(publishing && answering ? 1 : 0);
  }

  /** Whether Kafka answers the agent's process at all (its KafkaWatch, every 5 s). */
  static void answering(boolean up) {
    answering = up;
    KAFKA_UP.set(publishing && answering ? 1 : 0);
  }
  static final Histogram PUBLISH_SECONDS = Histogram.build()
      .name("knockwatch_ingest_publish_seconds").help("Time from a batch's first send to Kafka's acknowledgement of all of it.")
      .buckets(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30).register();
  static final Gauge CHECKPOINT_TIME = Gauge.build()
      .name("knockwatch_ingest_checkpoint_timestamp_seconds")
      .help("When positions were last committed (age: time() minus this).").register();
  static final Gauge LAG_BYTES = Gauge.build()
      .name("knockwatch_ingest_lag_bytes").help("Bytes written to sandbox logs and not read yet, by source.")
      .labelNames("source").register();

  /** Sanitize's count, read at each scrape: it lives in the events module, which has no metrics. */
  static final Collector REPLACED_CHARACTERS = new Collector() {
    @Override
    public List<MetricFamilySamples> collect() {
      return List.of(new CounterMetricFamily("knockwatch_ingest_replaced_characters_total",
          "Code points of agent-written fields that are no characters (lone surrogates, U+FFFE, U+FFFF), replaced with U+FFFD.",
          Sanitize.replaced()));
    }
  }.register();

  /** The per-line counters of one source, looked up once (a labels() lookup per line costs more than the count). */
  record PerSource(Counter.Child lines, Counter.Child bytes, Counter.Child published) {
    static PerSource of(String source) {
      return new PerSource(LINES.labels(source), BYTES.labels(source), PUBLISHED.labels(source));
    }
  }

  private IngestMetrics() {}
}
