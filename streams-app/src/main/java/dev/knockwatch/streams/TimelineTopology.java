package dev.knockwatch.streams;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.detect.ExactDuplicateProcessor;
import dev.knockwatch.streams.discover.DiscoverProcessor;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.timeline.CommandSummary;
import dev.knockwatch.streams.timeline.TimelineIndex;
import dev.knockwatch.streams.timeline.TimelineInput;
import dev.knockwatch.streams.timeline.TimelineProcessor;
import java.time.Duration;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Repartitioned;
import org.apache.kafka.streams.state.Stores;

/**
 * The timeline app, apart from detection so that its disk-backed stores never slow the pages:
 * every event of {@code knockwatch.violations} and every alert of {@code knockwatch.alerts}
 * (re-keyed by commandId through a repartition topic) into one {@link TimelineProcessor} per
 * partition, whose RocksDB stores (each with its changelog) answer queries by command id.
 * <pre>
 * timeline-violations → timeline-exact-duplicates ─┐
 * timeline-alerts → alerts-by-command (repartition) ─┴→ merge ─┬→ discover (discover-role-hours, discover-overview; reads timeline-commands)
 *                                                                └→ timeline (timeline-commands, timeline-events, timeline-index)
 * </pre>
 */
public final class TimelineTopology {

  public static final String DEFAULT_APPLICATION_ID = "knockwatch-timeline";
  public static final Duration DEFAULT_RETENTION = Duration.ofDays(30);
  static final String EXACT_DUPLICATES = "timeline-exact-duplicates";

  static final Serde<ViolationEvent> EVENT_SERDE = Json.eventSerde();
  static final Serde<Alert> ALERT_SERDE = Json.serde(Alert.class);
  static final Serde<TimelineInput> INPUT_SERDE = Json.serde(TimelineInput.class);

  private TimelineTopology() {}

  public static Topology build(Policy policy, Duration retention) {
    StreamsBuilder b = new StreamsBuilder();
    // cached: a busy command's summary changes at every event, and only its last value per commit
    // goes to RocksDB and the changelog (ScanFloodTest: without, one command's scan spent the
    // timeline thread writing its whole summary once per refusal); the events kept past the first
    // thousand are put and soon deleted, which the cache folds too
    b.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(TimelineProcessor.COMMANDS),
        Serdes.String(), Json.serde(CommandSummary.class)).withCachingEnabled());
    b.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(TimelineProcessor.EVENTS),
        Serdes.String(), EVENT_SERDE).withCachingEnabled());
    b.addStateStore(Stores.keyValueStoreBuilder(Stores.persistentKeyValueStore(TimelineIndex.STORE),
        Serdes.String(), Serdes.String()).withCachingEnabled());
    Duration idRetention = ExactDuplicateProcessor.idRetention(policy);
    ExactDuplicateProcessor.stores(EXACT_DUPLICATES, idRetention).forEach(b::addStateStore);
    KStream<String, TimelineInput> events = b.stream(Topics.VIOLATIONS.name(),
            Consumed.with(Serdes.String(), EVENT_SERDE).withTimestampExtractor(DetectionTopology.observedAt())
                .withName("timeline-violations"))
        .filter((k, e) -> k != null && e != null, Named.as("timeline-events-only"))
        // an event read twice is shown once, as detection counts it once
        .process(() -> new ExactDuplicateProcessor(EXACT_DUPLICATES, idRetention, false),
            Named.as("timeline-exact-duplicates"), EXACT_DUPLICATES, ExactDuplicateProcessor.idStore(EXACT_DUPLICATES))
        .mapValues(e -> new TimelineInput(e, null), Named.as("timeline-event-input"));
    KStream<String, TimelineInput> alerts = b.stream(Topics.ALERTS.name(),
            Consumed.with(Serdes.String(), ALERT_SERDE).withName("timeline-alerts"))
        .filter((k, a) -> a != null && a.commandId() != null, Named.as("timeline-alerts-only"))
        .selectKey((k, a) -> a.commandId(), Named.as("timeline-alert-by-command"))
        .repartition(Repartitioned.with(Serdes.String(), ALERT_SERDE).withName("alerts-by-command"))
        .mapValues(a -> new TimelineInput(null, a), Named.as("timeline-alert-input"));
    KStream<String, TimelineInput> merged = events.merge(alerts, Named.as("timeline-merge"));
    // discovery first: it asks the commands store whether an alert is new, before the timeline adds it
    DiscoverProcessor.stores().forEach(b::addStateStore);
    merged.process(() -> new DiscoverProcessor(policy, retention), Named.as("discover"), DiscoverProcessor.ROLE_HOURS,
        DiscoverProcessor.OVERVIEW, TimelineProcessor.COMMANDS);
    merged.process(() -> new TimelineProcessor(policy, retention), Named.as("timeline"), TimelineProcessor.COMMANDS,
        TimelineProcessor.EVENTS, TimelineIndex.STORE);
    Topology t = b.build();
    DetectionTopology.addPolicyStore(t);
    return t;
  }
}
