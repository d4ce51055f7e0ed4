package dev.knockwatch.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.RejectedLine;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.testkit.EmbeddedKafkaExtension;
import dev.knockwatch.testkit.RealShipper;
import dev.knockwatch.testkit.TopicReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The real rsyslog and syslog-ng, with the configurations knockwatch ships, carrying the log
 * layout to the raw topic, and {@code ingest --raw-topic}'s stage reading it: the detection
 * scenarios' logs give the events the agent gives; a kill -9 of the shipper mid-stream loses no
 * line and a line it sends again keeps its event id; a hostile agent's lines pass the stage as
 * they pass the agent.
 */
@Tag("integration")
@ExtendWith(EmbeddedKafkaExtension.class)
class ShippersTest {

  static final Path SCENARIOS = Path.of("../streams-app/src/test/resources/scenarios");
  static final Path REPLAY = Path.of("../cli/src/test/resources/replay/basic");

  @TempDir Path dir;

  /** Every scenario's logs, and replay's, under one root: each agent directory renamed {@code <agent>-<tag><n>}. */
  static List<String> layout(Path root, String tag) throws IOException {
    List<Path> inputs = new ArrayList<>();
    try (Stream<Path> s = Files.list(SCENARIOS)) {
      s.sorted().forEach(d -> inputs.add(d.resolve("input")));
    }
    inputs.add(REPLAY);
    List<String> agents = new ArrayList<>();
    int n = 0;
    for (Path input : inputs) {
      if (!Files.isDirectory(input)) {
        continue;
      }
      try (Stream<Path> s = Files.list(input)) {
        for (Path agentDir : s.filter(Files::isDirectory).sorted().toList()) {
          String agent = agentDir.getFileName() + "-" + tag + n++;
          Path to = Files.createDirectories(root.resolve(agent));
          try (Stream<Path> files = Files.list(agentDir)) {
            for (Path f : files.filter(Files::isRegularFile).toList()) {
              Files.copy(f, to.resolve(f.getFileName()));
            }
          }
          agents.add(agent);
        }
      }
    }
    return agents;
  }

  static Predicate<ConsumerRecord<String, ViolationEvent>> under(List<String> agents) {
    return r -> r.value().origin() != null && agents.stream().anyMatch(a -> r.value().origin().file().startsWith(a + "/"));
  }

  @ParameterizedTest
  @EnumSource(RealShipper.Kind.class)
  void theScenariosLogsThroughTheShipperGiveTheEventsTheAgentGives(RealShipper.Kind kind, EmbeddedKafkaBroker broker)
      throws Exception {
    Path logs = dir.resolve("logs");
    List<String> agents = layout(logs, kind.name().toLowerCase().replace('_', '-'));
    ListSink agentSink = new ListSink();
    IngestAgent agent = LogLayout.forLogDirectory(logs, p -> true, null, agentSink, "host-a", Duration.ZERO).wholeFiles();
    while (agent.pollOnce() > 0) {
      // every file, to its end
    }
    // syslog-ng gives no offset: its events' origin has none
    Function<ViolationEvent, String> said = e -> RawTopicIngestTest.said(e, kind == RealShipper.Kind.RSYSLOG);
    List<String> byAgent = agentSink.events.stream().map(said).sorted().toList();
    assertThat(byAgent).hasSizeGreaterThan(20);

    String topic = "raw-shipper-" + kind.name().toLowerCase();
    RawTopicIngestTest.createTopic(broker, topic);
    try (RealShipper shipper = RealShipper.start(kind, logs, dir.resolve("shipper"), broker.bootstrapServers(), topic);
        RawTopicIngest stage = RawTopicIngestTest.stage(broker, topic, "shipper-" + kind, logs)) {
      new Thread(stage, "raw-test").start();
      List<ConsumerRecord<String, ViolationEvent>> got = TopicReader.readUntil(broker, Topics.VIOLATIONS.name(),
          Json.serde(ViolationEvent.class).deserializer(), under(agents), byAgent.size());
      Thread.sleep(2_000); // anything more has time to arrive
      got = TopicReader.readToEnd(broker, Topics.VIOLATIONS.name(), Json.serde(ViolationEvent.class).deserializer(),
          under(agents));
      List<String> byStage = got.stream().map(r -> said.apply(r.value())).sorted().toList();
      assertThat(byStage).as(shipper.output()).isEqualTo(byAgent);
    }
  }

  @Test
  void aKillNineOfRsyslogMidStreamLosesNoLineAndALineSentAgainKeepsItsId(EmbeddedKafkaBroker broker) throws Exception {
    Path logs = dir.resolve("k9logs");
    String topic = "raw-rsyslog-kill-nine";
    RawTopicIngestTest.createTopic(broker, topic);
    int commands = 10;
    int lines = 3_000;
    List<Path> files = new ArrayList<>();
    Set<String> ids = new HashSet<>();
    for (int c = 0; c < commands; c++) {
      String id = String.format("RsyslogKillNine%07d", c);
      ids.add(id);
      files.add(Files.createDirectories(logs.resolve("agent-k9")).resolve(id + ".violations.jsonl"));
    }
    try (RealShipper shipper = RealShipper.start(RealShipper.Kind.RSYSLOG, logs, dir.resolve("rs-k9"),
        broker.bootstrapServers(), topic);
        RawTopicIngest stage = RawTopicIngestTest.stage(broker, topic, "rsyslog-k9", logs)) {
      new Thread(stage, "raw-test").start();
      Thread.sleep(1_000); // rsyslog watches the files before the first line
      for (int i = 0; i < lines; i++) {
        Path f = files.get(i % commands);
        String id = f.getFileName().toString().substring(0, 22);
        Files.writeString(f, RawTopicIngestTest.srtRecord(id, "n" + i + ".evil.test", i) + "\n", StandardCharsets.UTF_8,
            StandardOpenOption.APPEND, StandardOpenOption.CREATE);
        if (i == lines / 3) {
          shipper.kill9(); // lines go on being written while it is down
        }
        if (i == 2 * lines / 3) {
          shipper.restart();
        }
        if (i % 100 == 0) {
          Thread.sleep(20);
        }
      }
      List<ConsumerRecord<String, ViolationEvent>> got = TopicReader.readUntil(broker, Topics.VIOLATIONS.name(),
          Json.serde(ViolationEvent.class).deserializer(), r -> ids.contains(r.key()), lines);
      Thread.sleep(2_000);
      got = TopicReader.readToEnd(broker, Topics.VIOLATIONS.name(), Json.serde(ViolationEvent.class).deserializer(),
          r -> ids.contains(r.key()));
      Map<String, Set<String>> idsByLine = got.stream().collect(Collectors.groupingBy(
          r -> r.value().origin().file() + ":" + r.value().origin().offset(),
          Collectors.mapping(r -> r.value().eventId(), Collectors.toSet())));
      assertThat(idsByLine).as("every line, %s", shipper.output()).hasSize(lines);
      assertThat(idsByLine.values()).as("a line sent again keeps its one id").allSatisfy(s -> assertThat(s).hasSize(1));
      assertThat(got.stream().map(r -> r.value().eventId()).distinct().count()).isEqualTo(lines);
      System.out.printf("rsyslog kill -9: %d lines, %d events (%d sent again)%n", lines, got.size(), got.size() - lines);
    }
  }

  @Test
  void aHostileAgentsLinesThroughRsyslogAndTheStageStopNothingAndHideNoOtherRefusal(EmbeddedKafkaBroker broker)
      throws Exception {
    Path logs = dir.resolve("hostile");
    List<String> prefixes = new ArrayList<>();
    List<HostileLinesTest.Tree> trees = new ArrayList<>();
    for (long seed = 1; seed <= 2; seed++) {
      String prefix = "shipped-hostile-" + seed;
      prefixes.add(prefix);
      trees.add(HostileLinesTest.tree(new Hostile(seed), logs, prefix));
    }
    String topic = "raw-rsyslog-hostile";
    RawTopicIngestTest.createTopic(broker, topic);
    Predicate<String> ours = file -> prefixes.stream().anyMatch(file::startsWith);
    try (RealShipper shipper = RealShipper.start(RealShipper.Kind.RSYSLOG, logs, dir.resolve("rs-hostile"),
        broker.bootstrapServers(), topic);
        RawTopicIngest stage = RawTopicIngestTest.stage(broker, topic, "rsyslog-hostile", logs)) {
      new Thread(stage, "raw-test").start();
      Set<String> controls = trees.stream().map(HostileLinesTest.Tree::control).collect(Collectors.toSet());
      TopicReader.readUntil(broker, Topics.VIOLATIONS.name(), Json.serde(ViolationEvent.class).deserializer(),
          r -> controls.contains(r.key()), controls.size());
      // every srt line accounted for: an event or a rejected line at its offset
      Set<String> srtLines = new HashSet<>();
      for (HostileLinesTest.Tree t : trees) {
        for (Path f : t.srtFiles()) {
          String rel = logs.relativize(f).toString();
          long offset = 0;
          for (byte[] line : HostileLinesTest.lines(Files.readAllBytes(f))) {
            if (!new String(line, StandardCharsets.UTF_8).isBlank()) {
              srtLines.add(rel + ":" + offset);
            }
            offset += line.length + 1;
          }
        }
      }
      Set<String> accounted = new HashSet<>();
      List<ViolationEvent> events = List.of();
      List<RejectedLine> rejected = List.of();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (!accounted.containsAll(srtLines) && System.nanoTime() < deadline) {
        Thread.sleep(500);
        events = TopicReader.readToEnd(broker, Topics.VIOLATIONS.name(), Json.serde(ViolationEvent.class).deserializer(),
            r -> r.value().origin() != null && ours.test(r.value().origin().file())).stream().map(ConsumerRecord::value).toList();
        rejected = TopicReader.readToEnd(broker, Topics.REJECTED.name(), Json.serde(RejectedLine.class).deserializer(),
            r -> ours.test(r.value().file())).stream().map(ConsumerRecord::value).toList();
        accounted.clear();
        events.forEach(e -> accounted.add(e.origin().file() + ":" + e.origin().offset()));
        rejected.forEach(r -> accounted.add(r.key()));
      }
      Set<String> missing = new HashSet<>(srtLines);
      missing.removeAll(accounted);
      assertThat(missing).as("srt lines with no outcome; %s", shipper.output()).isEmpty();
      assertThat(stage.committedTransactions()).isPositive();
      for (ViolationEvent e : events) {
        for (String field : new String[] {e.commandId(), e.agentId(), e.host(), e.url(), e.path(), e.reason(),
            e.commandText(), e.origin().file()}) {
          HostileLinesTest.assertSafe(field, 4096 + 1, e);
        }
      }
      for (RejectedLine r : rejected) {
        HostileLinesTest.assertSafe(r.line(), IngestAgent.MAX_REJECTED_LINE_CHARS + 1, r);
      }
      assertThat(events).as("events published").hasSizeGreaterThan(40);
      assertThat(events.stream().map(ViolationEvent::source).distinct()).as("sources seen").hasSizeGreaterThanOrEqualTo(4);
    }
  }
}
