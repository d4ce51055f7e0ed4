package dev.knockwatch.cli;

import dev.knockwatch.cli.run.UsageException;
import dev.knockwatch.cli.run.Rules;
import dev.knockwatch.cli.replay.TimeOrderedSink;
import dev.knockwatch.ingest.LogLayout;
import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.RejectedLine;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.EventSink;
import dev.knockwatch.ingest.IngestAgent;
import dev.knockwatch.ingest.KafkaEventSink;
import dev.knockwatch.streams.DetectionTopology;
import dev.knockwatch.streams.StreamsApp;
import dev.knockwatch.streams.lifecycle.AlertLifecycleProcessor;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.Rule;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import picocli.CommandLine.Command;
import dev.knockwatch.notify.AlertDispatcher;
import dev.knockwatch.notify.Notifiers;
import dev.knockwatch.notify.config.ReceiversConfig;
import dev.knockwatch.notify.pipeline.Backoff;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/**
 * Runs the real pipeline — an embedded broker on a temporary directory, the ingest parsers, the
 * detection topology — over log files, and prints every alert as one JSON object a line.
 * Events are published in event-time order (ties: file, then offset), so the same input always
 * gives the same alerts.
 */
@Command(name = "replay", mixinStandardHelpOptions = true,
    description = {"Replay log files through the real pipeline and print the alerts as JSON lines.",
        "An embedded broker on a temporary directory, the real parsers and topology; each line's own "
        + "timestamp is its event time. Deterministic. Logs go to stderr."})
final class ReplayCommand implements Callable<Integer> {

  static final String APPLICATION_ID = "knockwatch-replay";

  @Spec CommandSpec spec;

  @Mixin RulesOption rulesOption;

  @Option(names = "--input", paramLabel = "PATH", arity = "1..*", required = true,
      description = "Files or folders laid out <agentId>/<commandId>.violations.jsonl.")
  List<Path> inputs;

  @Option(names = "--deliver",
      description = {"Also run the notifier with the receivers of the rules directory (receivers.yaml), wait until every "
          + "notification is sent or given up, and print what each receiver was sent on stderr."})
  boolean deliver;

  @Override
  public Integer call() throws Exception {
    Path rules = rulesOption.dir;
    Policy policy = Rules.load(rules);
    ReceiversConfig receivers = deliver ? ReceiversConfig.load(rules) : null;
    for (Path p : inputs) {
      if (!Files.exists(p)) {
        throw new UsageException("input " + p + " does not exist");
      }
    }
    Path tmp = Files.createTempDirectory("knockwatch-replay-");
    try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(tmp.resolve("kafka"), 0)) {
      // one partition a topic: the refusals, their copies by grain and the alerts each keep one order,
      // so that a replay's alerts are the same every run
      dev.knockwatch.broker.TopicCreator.createMissing(broker.bootstrapServers(), Map.of(),
          new dev.knockwatch.broker.TopicCreator.Layout(1, null));
      List<Alert> alerts = replay(broker.bootstrapServers(), tmp, policy, inputs);
      PrintWriter out = spec.commandLine().getOut();
      alerts.forEach(a -> out.println(Json.write(a)));
      out.flush();
      if (deliver) {
        deliver(broker.bootstrapServers(), receivers, alerts.size());
      }
    } finally {
      EmbeddedKafkaBroker.wipe(tmp);
    }
    return Knockwatch.OK;
  }

  /**
   * Runs the notifier over the alerts topic until it has handled all {@code alertCount} alerts
   * (sent, skipped or given up by every receiver); console receivers print on stderr, beside
   * the logs, so stdout keeps only the alerts.
   */
  private void deliver(String bootstrap, ReceiversConfig receivers, int alertCount) throws InterruptedException {
    PrintStream err = new PrintStream(new FileOutputStream(FileDescriptor.err), true, StandardCharsets.UTF_8);
    AlertDispatcher dispatcher = new AlertDispatcher(bootstrap, "knockwatch-replay-notify", null, Map.of(), receivers,
        Notifiers.create(receivers, err), Backoff.DEFAULT);
    dispatcher.flushGroups();
    Thread t = new Thread(dispatcher, "knockwatch-notify");
    t.start();
    try {
      while (dispatcher.committedRecords() < alertCount || !dispatcher.idle()) {
        if (!t.isAlive()) {
          throw new IllegalStateException("the notifier stopped before every alert was delivered");
        }
        Thread.sleep(50);
      }
    } finally {
      dispatcher.close();
    }
    spec.commandLine().getErr().println("delivered " + alertCount + " alert record(s) to " + Rules.describe(receivers));
  }

  /** Publishes the inputs, runs detection until it has consumed all of them, and returns the alerts in order. */
  static List<Alert> replay(String bootstrap, Path workDir, Policy policy, List<Path> inputs)
      throws Exception {
    long latest;
    try (KafkaEventSink kafka = KafkaEventSink.create(bootstrap, Map.of())) {
      TimeOrderedSink sorted = new TimeOrderedSink(kafka);
      for (Path input : inputs) {
        readAll(input, sorted);
      }
      latest = sorted.drain();
    }
    long end = latest + policy.rules().stream().mapToLong(r -> r.resolveAfter().toMillis()).max()
        .orElse(Rule.DEFAULT_RESOLVE_AFTER.toMillis()) + 1000;
    // a replay waits for detection's commits (each hop of the by-grain topic, each caught-up check),
    // not for a steady rate's CPU: it commits as often as a stream thread turns
    try (StreamsApp streams = new StreamsApp(APPLICATION_ID, bootstrap, workDir.resolve("streams"), policy,
        AlertLifecycleProcessor.Clock.STREAM, Map.of(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 100))
        .start(Duration.ofSeconds(120))) {
      // every refusal judged, at every grain, before the end of input moves time past them
      streams.awaitCaughtUp(Duration.ofSeconds(120));
      endOfInput(bootstrap, end, DetectionTopology.readsByGrain(policy));
      streams.awaitCaughtUp(Duration.ofSeconds(120));
    }
    List<Alert> alerts = readAlerts(bootstrap);
    alerts.sort(Comparator.comparing(Alert::firstSeen).thenComparing(Alert::commandId).thenComparing(Alert::rule)
        .thenComparing(Alert::fingerprint).thenComparing(Alert::lastSeen).thenComparing(Alert::status)
        .thenComparing(Alert::count));
    return alerts;
  }

  /**
   * The end of input moves time on: an empty record (no value) on every partition, stamped after
   * the last refusal plus the longest resolveAfter, so stream time passes every idle limit and
   * alerts resolve as they would live — deterministically.
   */
  private static void endOfInput(String bootstrap, long at, boolean byGrain) throws Exception {
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of(
        ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap, ProducerConfig.ACKS_CONFIG, "all"),
        new StringSerializer(), new StringSerializer())) {
      for (String topic : byGrain ? List.of(Topics.VIOLATIONS.name(), Topics.BY_GRAIN.name()) : List.of(Topics.VIOLATIONS.name())) {
        for (int p = 0; p < producer.partitionsFor(topic).size(); p++) {
          producer.send(new ProducerRecord<String, String>(topic, p, (Long) at, "end-of-replay", (String) null)).get();
        }
      }
    }
  }

  private static void readAll(Path input, EventSink sink) throws EventSink.PublishException {
    InputTree tree = InputTree.of(input);
    IngestAgent agent = LogLayout.forLogDirectory(tree.root(), tree.only(), null, sink, "replay", Duration.ZERO).wholeFiles()
        .untimedFromFiles();
    while (agent.pollOnce() > 0) {
      // read to the end of every file
    }
  }

  private static List<Alert> readAlerts(String bootstrap) {
    Map<String, Object> p = Map.of(
        ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
        ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed",
        ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    List<Alert> alerts = new ArrayList<>();
    try (KafkaConsumer<String, Alert> consumer = new KafkaConsumer<>(p, new StringDeserializer(),
        Json.serde(Alert.class).deserializer())) {
      List<TopicPartition> parts = new ArrayList<>();
      for (int i = 0; i < consumer.partitionsFor(Topics.ALERTS.name()).size(); i++) {
        parts.add(new TopicPartition(Topics.ALERTS.name(), i));
      }
      consumer.assign(parts);
      consumer.seekToBeginning(parts);
      Map<TopicPartition, Long> ends = consumer.endOffsets(parts);
      Instant deadline = Instant.now().plusSeconds(60);
      while (parts.stream().anyMatch(tp -> consumer.position(tp) < ends.get(tp))) {
        if (Instant.now().isAfter(deadline)) {
          throw new IllegalStateException("cannot read the alerts topic to its end");
        }
        for (ConsumerRecord<String, Alert> r : consumer.poll(Duration.ofMillis(200))) {
          alerts.add(r.value());
        }
      }
    }
    return alerts;
  }
}
