package dev.knockwatch.streams;

import dev.knockwatch.streams.metrics.StreamsMetrics;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Topics;
import org.apache.kafka.clients.CommonClientConfigs;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.detect.CrossSourceDedupProcessor;
import dev.knockwatch.streams.detect.DetectProcessor;
import dev.knockwatch.streams.detect.ExactDuplicateProcessor;
import dev.knockwatch.streams.lifecycle.AlertLifecycleProcessor;
import dev.knockwatch.streams.lifecycle.AlertState;
import dev.knockwatch.streams.rules.Hit;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.PolicyFiles;
import dev.knockwatch.streams.rules.PolicyView;
import org.apache.kafka.streams.state.KeyValueStore;
import dev.knockwatch.streams.rules.Rule;
import dev.knockwatch.streams.rules.Grain;
import java.util.EnumMap;
import java.util.Set;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import org.apache.kafka.streams.AutoOffsetReset;
import org.apache.kafka.streams.processor.api.ContextualProcessor;
import org.apache.kafka.streams.processor.api.Record;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.LogAndContinueExceptionHandler;
import org.apache.kafka.streams.processor.TimestampExtractor;
import org.apache.kafka.streams.state.Stores;

/**
 * The detection app: violations in, alerts out. Three parts, as in Kafka's own examples: the
 * topics ({@link Topics}), {@link #streamsConfig}, and the pure {@link #buildTopology}, which
 * tests drive with a TopologyTestDriver.
 */
public final class DetectionTopology {

  public static final String DEFAULT_APPLICATION_ID = "knockwatch-streams";

  static final Serde<ViolationEvent> EVENT_SERDE = Json.eventSerde();
  static final Serde<Alert> ALERT_SERDE = Json.serde(Alert.class);
  static final Serde<AlertState> ALERT_STATE_SERDE = new dev.knockwatch.streams.lifecycle.AlertStateSerde();
  static final String DEDUP_STORE = "cross-source-dedup";
  /** The rules' state, one value per key: every stateful rule's slice ({@link DetectProcessor}). */
  public static final String DETECT_STORE = "detect";
  static final String EXACT_DUPLICATES_STORE = "exact-duplicates";
  static final Serde<PolicyFiles> POLICY_SERDE = Json.serde(PolicyFiles.class);
  /** On knockwatch.violations.by-grain: which grain's key the record carries. */
  static final String GRAIN_HEADER = "knockwatch-grain";
  static final String BY_GRAIN_LIFECYCLE_STORE = "alert-lifecycle-by-grain";
  /** The suffix of a detector's node and stores on the by-grain path. */
  static final String BY_GRAIN = Rule.GRAIN_SUFFIX;

  private DetectionTopology() {}

  /** How long detection's main consumer's fetch waits at the broker when there is nothing to read. */
  static final int DETECTION_FETCH_WAIT_MS = 2_000;

  /** How often each app commits (a transaction) unless its caller says otherwise. */
  public static final int COMMIT_INTERVAL_MS = 100;

  public static Properties streamsConfig(String applicationId, String bootstrapServers, Path stateDir,
      Map<String, Object> clientProps) {
    Properties p = new Properties();
    p.putAll(clientProps);
    p.put(StreamsConfig.APPLICATION_ID_CONFIG, applicationId);
    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    // Each commit is a transaction and writes every key it saw: at 500 ms instead of 100 ms detection
    // spends a fifth less per event and the process a quarter less CPU at 5,000 events/s, p99 620-640
    // ms, inside the 2 s page budget (at 1 s p99 went past it); the timeline then lags a page by a
    // commit or two (docs/PERFORMANCE.md, "Detection's commit interval"). A commit.interval.ms of the
    // caller's (--streams-config; replay, which waits for commits) stands.
    p.putIfAbsent(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, COMMIT_INTERVAL_MS);
    p.put(StreamsConfig.ENSURE_EXPLICIT_INTERNAL_RESOURCE_NAMING_CONFIG, true);
    // A value that is not a ViolationEvent is logged and skipped rather than stopping detection.
    p.put(StreamsConfig.DESERIALIZATION_EXCEPTION_HANDLER_CLASS_CONFIG, LogAndContinueExceptionHandler.class);
    p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
    // An instance added to a running deployment is given warm-up copies of the tasks it is to take;
    // they move to it at the next probing rebalance once those copies are caught up: every 10 min by
    // default, 1 min at least. At 1 min, scale-out takes effect about a minute after the new
    // instance starts (ClusterScaleOutTest); the probing stops once the tasks are balanced.
    p.put(StreamsConfig.PROBING_REBALANCE_INTERVAL_MS_CONFIG, 60_000);
    // 64 KiB a partition, not 1 MiB: one command flooding its partition hands the thread at most
    // a few hundred of its events before another partition's page (FloodFairnessTest)
    p.put(StreamsConfig.consumerPrefix(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG), 64 * 1024);
    // An idle consumer's fetch waits this long at the broker for a record, then is sent again: 500 ms by
    // default, two requests a second from an app's main and global consumers for nothing. A record
    // answers a waiting fetch at once, so a longer wait delays none (docs/PERFORMANCE.md, "up idle");
    // the global consumer, whose partitions are assigned for good, waits longest. The main consumer
    // heartbeats less often too (Topics.HEARTBEAT_INTERVAL_MS).
    // The restore consumer keeps the default: it fetches only while restoring, where a changelog that
    // ends in transaction markers answers a fetch only at its wait's end.
    // Detection's own waits less: after a restart its tasks' partitions resume one by one as their state is
    // restored, each fetched only once the fetch in flight comes back (at 5 s, a refusal written at a restart
    // after kill -9 paged 19.3 s later, not 12.7). The timeline is on no page's path.
    p.put(StreamsConfig.mainConsumerPrefix(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG),
        applicationId.equals(TimelineTopology.DEFAULT_APPLICATION_ID) ? dev.knockwatch.events.Topics.IDLE_FETCH_WAIT_MS
            : DETECTION_FETCH_WAIT_MS);
    dev.knockwatch.events.Topics.heartbeatIntervalMs(clientProps, "consumer.", "main.consumer.").ifPresent(ms ->
        p.put(StreamsConfig.mainConsumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG), ms));
    p.put(StreamsConfig.globalConsumerPrefix(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG),
        dev.knockwatch.events.Topics.ASSIGNED_FETCH_WAIT_MS);
    // A node that stops answering holds a request until it times out; only then are its partitions'
    // new leaders looked up (Topics.REQUEST_TIMEOUT_MS). The restore and global consumers keep the default.
    // A request.timeout.ms of the user's (--kafka-config) stands for both.
    if (!clientProps.containsKey(CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG)) {
      p.put(StreamsConfig.producerPrefix(CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG), dev.knockwatch.events.Topics.REQUEST_TIMEOUT_MS);
      p.put(StreamsConfig.mainConsumerPrefix(CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG), dev.knockwatch.events.Topics.REQUEST_TIMEOUT_MS);
    }
    // A stream thread's loop waits at most poll.ms (100 ms) for records before it punctuates and
    // commits, and takes each step of a start (assignment, restoration, running) one turn at a time:
    // both apps keep it, a commit due waits no longer for its page and a restart no longer for its banner.
    // Running and idle, a poll after an empty one waits three seconds instead (StreamsApp's IdlePolls).
    return p;
  }

  /**
   * The detection graph, in the Processor API (named nodes, named stores):
   * <pre>
   * violations-source -> exact-duplicates -> count-refusals (metrics) -> cross-source-dedup
   *     -> detect-&lt;rule&gt; (one per rule: count, off-role, address-class, bypass, fs-guard)
   *     -> source-notes (a refusal already seen from another log: adds its source)
   *   count-refusals -> detect-&lt;rule&gt; (wall-breach: guard probe results, which are no refusals)
   *   -> alert-lifecycle (first hit fires, updates throttled, idle resolves) -> alerts-sink
   * </pre>
   * Every store but one lives in memory, each with its changelog (so it survives restarts): they
   * are small — a minute of sightings, the live windows' counts, two minutes of proxy refusals,
   * the firing alerts — and hit on every refusal, where a RocksDB call costs more than the work.
   * The one on disk holds every event id of the last minutes ({@link ExactDuplicateProcessor}):
   * as many as the events of that span, too many for the heap in a flood.
   */
  /** Whether {@code policy} has a rule of another grain than the command's: the topology then reads the by-grain topic. */
  public static boolean readsByGrain(Policy policy) {
    return policy.rules().stream().anyMatch(r -> r.per() != Grain.COMMAND);
  }

  public static Topology buildTopology(Policy policy, AlertLifecycleProcessor.Clock clock) {
    Topology t = new Topology();
    t.addSource(AutoOffsetReset.earliest(), "violations-source", observedAt(), Serdes.String().deserializer(),
        EVENT_SERDE.deserializer(), Topics.VIOLATIONS.name());
    // every rule is judged in one processor per path, on one state per key ("detect"), but for a count in
    // aligned windows, which has a processor and a window store of its own ("detect-<rule>")
    // every rule is judged on the command's path too, where the key is its grain's own (Rule.judgesAt): a
    // refusal with no task is its own command's task, and a wall's that names no command travels under its
    // agent's (or session's) key already
    List<Rule> commandRules = policy.rules();
    List<Rule> grainRules = policy.rules().stream().filter(r -> r.per() != Grain.COMMAND).toList();
    List<String> ownNodes = new ArrayList<>();
    List<String> grainOwnNodes = new ArrayList<>();
    // a rule of the task's, the session's or the agent's grain is judged on the command's path too: a
    // refusal with no task (srt, Squid, strace) is its own command's task, and its state and alerts stay
    // the command's; a wall's refusal that names no command travels under its agent's (or session's) key
    // already; only refusals with a task (a harness's tool calls) go around through the by-grain topic
    boolean byGrain = !grainRules.isEmpty();
    Set<Grain> grains = grainRules.stream().map(Rule::per).collect(java.util.stream.Collectors.toUnmodifiableSet());
    // the same refusal read twice (a line written again, a copied file, a batch sent again) counts once
    Duration idRetention = ExactDuplicateProcessor.idRetention(policy);
    t.addProcessor("exact-duplicates", () -> new ExactDuplicateProcessor(EXACT_DUPLICATES_STORE, idRetention, true),
        "violations-source");
    ExactDuplicateProcessor.stores(EXACT_DUPLICATES_STORE, idRetention).forEach(s -> t.addStateStore(s, "exact-duplicates"));
    t.addProcessor("count-refusals", () -> new ContextualProcessor<String, ViolationEvent, String, ViolationEvent>() {
      private final StreamsMetrics.RefusalCounters refusals = new StreamsMetrics.RefusalCounters();
      private PolicyView view;

      @Override
      public void init(org.apache.kafka.streams.processor.api.ProcessorContext<String, ViolationEvent> context) {
        super.init(context);
        view = PolicyView.of(policy, context);
      }

      @Override
      public void process(Record<String, ViolationEvent> r) {
        ViolationEvent e = r.value();
        if (e != null && e.unattributed() != null) {
          // ingest's notice of a refusal it could not attribute: only ingest-rejects reads it
          context().forward(DetectProcessor.Route.INGEST_NOTICE.mark(r), "detect");
          return;
        }
        if (e != null && e.identityConflict() != null) {
          // a line that claimed another identity, refusal or probe result, before any dedup can hide it
          context().forward(DetectProcessor.Route.IDENTITY_CLAIM.mark(r), "detect");
        }
        if (e != null && e.sandboxOff()) {
          // a call that asked to run outside the sandbox: no refusal, only sandbox-escape reads it
          context().forward(DetectProcessor.Route.SANDBOX_REQUEST.mark(r), "detect");
          if (byGrain) {
            context().forward(r, "by-grain");
          }
          return;
        }
        if (e != null && e.unenforced()) {
          // what a wall in audit or report mode let through: no refusal, only the drift rules read it
          context().forward(DetectProcessor.Route.UNENFORCED.mark(r), "detect");
          if (byGrain) {
            context().forward(r, "by-grain");
          }
          return;
        }
        if (e != null && e.probe() != null) {
          // a guard probe's result is no refusal: only wall-breach reads it
          StreamsMetrics.PROBE_RESULTS.labels(String.valueOf(e.probe().refused())).inc();
          context().forward(DetectProcessor.Route.PROBE_RESULT.mark(r), "detect");
          return;
        }
        if (e != null) {
          refusals.inc(e, view.roleOf(e.agentId()));
        }
        context().forward(r, "cross-source-dedup");
      }
    }, "exact-duplicates");
    List<String> afterDedup = new ArrayList<>(List.of("detect"));
    for (Rule rule : commandRules) {
      if (!DetectProcessor.judgesHere(rule)) {
        afterDedup.add("detect-" + rule.id());
        ownNodes.add("detect-" + rule.id());
      }
    }
    if (byGrain) {
      afterDedup.add("by-grain");
    }
    t.addProcessor("cross-source-dedup",
        () -> new CrossSourceDedupProcessor(DEDUP_STORE, afterDedup, "source-notes"), "count-refusals");
    t.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(DEDUP_STORE), Serdes.String(),
        Serdes.String()), "cross-source-dedup");
    if (byGrain) {
      // a rule counting per task, session or agent: its refusals again, keyed by that grain, through
      // the by-grain topic, so that the tool calls of one task meet in one state (and one alert)
      t.addProcessor("by-grain", () -> new ContextualProcessor<String, ViolationEvent, String, ViolationEvent>() {
        @Override
        public void process(Record<String, ViolationEvent> r) {
          for (Grain g : grains) {
            String key = g.keyOf(r.key(), r.value());
            if (key.equals(r.key())) {
              continue; // a refusal with no task: judged on its command's path
            }
            org.apache.kafka.common.header.internals.RecordHeaders h = new org.apache.kafka.common.header.internals.RecordHeaders();
            h.add(GRAIN_HEADER, g.wireName().getBytes(java.nio.charset.StandardCharsets.UTF_8));
            context().forward(r.withKey(key).withHeaders(h));
          }
        }
      }, "cross-source-dedup", "count-refusals");
      t.addSink("by-grain-sink", Topics.BY_GRAIN.name(), Serdes.String().serializer(), EVENT_SERDE.serializer(), "by-grain");
      t.addSource(AutoOffsetReset.earliest(), "by-grain-source", observedAt(), Serdes.String().deserializer(),
          EVENT_SERDE.deserializer(), Topics.BY_GRAIN.name());
      t.addProcessor("detect-by-grain", () -> new DetectProcessor(grainRules.stream().filter(DetectProcessor::judgesHere)
          .toList(), policy, DETECT_STORE + BY_GRAIN, GRAIN_HEADER), "by-grain-source");
      t.addStateStore(DetectProcessor.store(DETECT_STORE + BY_GRAIN,
          grainRules.stream().filter(DetectProcessor::judgesHere).toList()), "detect-by-grain");
      grainOwnNodes.add("detect-by-grain");
      Map<Grain, List<String>> grainNodes = new EnumMap<>(Grain.class);
      for (Rule rule : grainRules) {
        if (!DetectProcessor.judgesHere(rule)) {
          grainNodes.computeIfAbsent(rule.per(), g -> new ArrayList<>()).add("detect-" + rule.id() + BY_GRAIN);
          grainOwnNodes.add("detect-" + rule.id() + BY_GRAIN);
        }
      }
      if (!grainNodes.isEmpty()) {
        // a count in aligned windows per task, session or agent: its records by their grain
        t.addProcessor("by-grain-router", () -> new ContextualProcessor<String, ViolationEvent, String, ViolationEvent>() {
          @Override
          public void process(Record<String, ViolationEvent> r) {
            if (r.key() == null || r.value() == null || r.value().sandboxOff() || r.value().unenforced()) {
              return;
            }
            org.apache.kafka.common.header.Header h = r.headers().lastHeader(GRAIN_HEADER);
            Grain g = h == null ? null : Grain.ofWireName(new String(h.value(), java.nio.charset.StandardCharsets.UTF_8));
            for (String node : g == null ? List.<String>of() : grainNodes.getOrDefault(g, List.of())) {
              context().forward(r, node);
            }
          }
        }, "by-grain-source");
      }
    }
    t.addProcessor("detect", () -> new DetectProcessor(commandRules.stream().filter(DetectProcessor::judgesHere).toList(),
        policy, DETECT_STORE, null), "cross-source-dedup", "count-refusals");
    t.addStateStore(DetectProcessor.store(DETECT_STORE, commandRules.stream().filter(DetectProcessor::judgesHere).toList()),
        "detect");
    for (Rule rule : policy.rules()) {
      String node = "detect-" + rule.id();
      if (!DetectProcessor.judgesHere(rule)) {
        rule.detector().addTo(t, rule, policy, node, "", "cross-source-dedup");
      }
      if (rule.per() != Grain.COMMAND && !DetectProcessor.judgesHere(rule)) {
        rule.detector().addTo(t, rule, policy, node + BY_GRAIN, BY_GRAIN, "by-grain-router");
      }
    }
    t.addProcessor("source-notes", () -> new ContextualProcessor<String, ViolationEvent, String, Hit>() {
      @Override
      public void process(Record<String, ViolationEvent> r) {
        ViolationEvent e = r.value();
        Instant at = Instant.ofEpochMilli(r.timestamp());
        context().forward(r.withValue(new Hit(null, null, r.key(), e.agentId(), null, e.host(), e.port(), e.source(),
            at, at, List.of(), 0, null, null, null, null)));
      }
    }, "cross-source-dedup");
    List<String> parents = new ArrayList<>(List.of("detect"));
    parents.addAll(ownNodes);
    parents.add("source-notes");
    t.addProcessor("alert-lifecycle", () -> new AlertLifecycleProcessor(clock,
        AlertLifecycleProcessor.DEFAULT_THROTTLE, policy), parents.toArray(String[]::new));
    // in memory (with its changelog): the processor holds every firing alert in memory anyway
    t.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(AlertLifecycleProcessor.STORE),
        Serdes.String(), ALERT_STATE_SERDE), "alert-lifecycle");
    t.addSink("alerts-sink", Topics.ALERTS.name(), Serdes.String().serializer(), ALERT_SERDE.serializer(),
        "alert-lifecycle");
    if (byGrain) {
      // the grains' detectors are a sub-topology of their own (from the by-grain topic, with their own
      // stream time and their own lifecycle), so that the tool calls' copies, which arrive after the
      // command's own refusals, are never judged late against them
      List<String> grainParents = grainOwnNodes;
      t.addProcessor("alert-lifecycle-by-grain", () -> new AlertLifecycleProcessor(clock,
          AlertLifecycleProcessor.DEFAULT_THROTTLE, policy, BY_GRAIN_LIFECYCLE_STORE), grainParents.toArray(String[]::new));
      t.addStateStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(BY_GRAIN_LIFECYCLE_STORE),
          Serdes.String(), ALERT_STATE_SERDE), "alert-lifecycle-by-grain");
      t.addSink("alerts-sink-by-grain", Topics.ALERTS.name(), Serdes.String().serializer(), ALERT_SERDE.serializer(),
          "alert-lifecycle-by-grain");
    }
    addPolicyStore(t);
    return t;
  }

  /** The published policy, the same for every instance: a global store over the compacted policy topic. */
  public static void addPolicyStore(Topology t) {
    t.addGlobalStore(Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(PolicyView.STORE), Serdes.String(),
            POLICY_SERDE).withLoggingDisabled(), "policy-source", Serdes.String().deserializer(),
        POLICY_SERDE.deserializer(), Topics.POLICY.name(), "policy-updater",
        () -> new ContextualProcessor<String, PolicyFiles, Void, Void>() {
          @Override
          public void process(Record<String, PolicyFiles> r) {
            KeyValueStore<String, PolicyFiles> store = context().getStateStore(PolicyView.STORE);
            if (r.key() != null) {
              store.put(r.key(), r.value()); // a null value (tombstone) deletes
            }
          }
        });
  }

  /**
   * The baseline {@code bench streams} compares against: the same source (deserializing each
   * event) straight to a sink, no state.
   */
  public static Topology passThrough(String sinkTopic) {
    Topology t = new Topology();
    t.addSource(AutoOffsetReset.earliest(), "violations-source", observedAt(), Serdes.String().deserializer(),
        EVENT_SERDE.deserializer(), Topics.VIOLATIONS.name());
    t.addSink("pass-through-sink", sinkTopic, Serdes.String().serializer(), EVENT_SERDE.serializer(),
        "violations-source");
    return t;
  }

  /** Event time is when the sandbox refused, not when Kafka received it. */
  public static TimestampExtractor observedAt() {
    return (record, partitionTime) -> {
      if (record.value() instanceof ViolationEvent e && e.observedAt() != null) {
        return e.observedAt().toEpochMilli();
      }
      return record.timestamp() >= 0 ? record.timestamp() : partitionTime;
    };
  }
}
