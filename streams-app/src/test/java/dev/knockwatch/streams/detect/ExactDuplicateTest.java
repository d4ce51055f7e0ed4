package dev.knockwatch.streams.detect;

import dev.knockwatch.streams.state.WriteBackStore;
import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.DetectionDriver;
import dev.knockwatch.streams.rules.Policy;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.processor.api.MockProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.Stores;
import org.apache.kafka.streams.state.WindowStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The same refusal read twice counts once (a shipper's retry, a copied file, a batch ingest sent
 * again with its event ids), while real retries, however fast, count apart.
 */
class ExactDuplicateTest {

  static final Instant T0 = Instant.parse("2026-11-29T10:00:00Z");
  static final String CMD = "DupDupDupDupDupDupDup1";
  static final Duration ID_RETENTION = ExactDuplicateProcessor.idRetention(Policy.ofRules(List.of(CountDetector.defaultRule())));

  @TempDir Path state;
  DetectionDriver d;
  TopologyTestDriver driver;
  TestInputTopic<String, ViolationEvent> violations;
  TestOutputTopic<String, Alert> alerts;
  int offset;

  @BeforeEach
  void setUp() {
    d = DetectionDriver.start(List.of(CountDetector.defaultRule()), state, 10 * 1024 * 1024);
    driver = d.driver;
    violations = d.violations;
    alerts = d.alerts;
  }

  @AfterEach
  void tearDown() {
    d.close();
  }

  /** A refusal as ingest publishes it from {@code file}: its event id and origin are where it was read. */
  static ViolationEvent refusal(String file, int offset, Instant at) {
    return ViolationEvent.builder().eventId(file + "@" + offset).commandId(CMD).agentId("ci-runner-1")
        .source("srt-violation").kind(Kind.NETWORK).action("network-outbound").host("example.com").port(443)
        .reason("host is not on the allow list").observedAt(at).ingestedAt(T0.plusSeconds(600))
        .origin(new ViolationEvent.Origin(file, offset, "host-a")).build();
  }

  private void read(String file, Instant at) {
    violations.pipeInput(CMD, refusal(file, offset, at), at);
    offset += 200;
  }

  @Test
  void threeRefusalsEachWrittenTwiceAreThreeAndDoNotWarn() {
    double before = duplicates();
    for (int i = 0; i < 3; i++) {
      read("ci-runner-1/" + CMD + ".violations.jsonl", T0.plusSeconds(i));
      read("ci-runner-1/" + CMD + ".violations.jsonl", T0.plusSeconds(i)); // the shipper wrote it again
    }
    assertThat(alerts.isEmpty()).as("3 refusals, not 6").isTrue();
    assertThat(duplicates() - before).isEqualTo(3);
  }

  @Test
  void aBatchSentAgainWithItsEventIdsCountsOnce() {
    for (int round = 0; round < 2; round++) {
      offset = 0;
      for (int i = 0; i < 4; i++) {
        read("ci-runner-1/" + CMD + ".violations.jsonl", T0.plusSeconds(i));
      }
    }
    assertThat(alerts.isEmpty()).as("4 refusals, not 8").isTrue();
  }

  @Test
  void fastRealRetriesFortyMillisecondsApartCountApart() {
    for (int i = 0; i < 5; i++) {
      read("ci-runner-1/" + CMD + ".violations.jsonl", T0.plusMillis(40L * i));
    }
    assertThat(alerts.readValuesToList()).extracting(Alert::count).containsExactly(5L);
  }

  @Test
  void aCopiedFileCountsOnce() {
    for (String file : List.of("ci-runner-1/" + CMD + ".violations.jsonl", "ci-runner-1/" + CMD + ".violations.jsonl.1")) {
      offset = 0;
      for (int i = 0; i < 4; i++) {
        read(file, T0.plusSeconds(i));
      }
    }
    assertThat(alerts.isEmpty()).isTrue();
  }

  @Test
  void aNewProcessorOnTheStoreRemembersWhatItSaw() {
    MockProcessorContext<String, ViolationEvent> context = contextWithStore();
    ExactDuplicateProcessor first = processor();
    first.init(context);
    first.process(new Record<>(CMD, refusal("a", 0, T0), T0.toEpochMilli()));
    // a commit, then a restart: the digests are read back from what the store wrote
    WriteBackStore<?> digests = context.getStateStore("exact-duplicates");
    digests.flushCache();
    digests.clearCache();
    ExactDuplicateProcessor again = processor();
    again.init(context);
    again.process(new Record<>(CMD, refusal("a", 0, T0), T0.toEpochMilli()));
    again.process(new Record<>(CMD, refusal("a", 200, T0.plusMillis(1)), T0.toEpochMilli() + 1));
    assertThat(context.forwarded()).extracting(f -> f.record().value().eventId()).containsExactly("a@0", "a@200");
  }

  @Test
  void anEventIdIsKnownForItsRetentionOfStreamTimeWhateverItsTimeAndCountsAgainAfter() {
    MockProcessorContext<String, ViolationEvent> context = contextWithStore();
    ExactDuplicateProcessor p = processor();
    p.init(context);
    p.process(new Record<>(CMD, refusal("a", 0, T0), T0.toEpochMilli()));
    for (int i = 1; i <= 1_000; i++) { // far more than the 32 digests a command keeps
      p.process(new Record<>(CMD, refusal("a", i, T0.plusMillis(i)), T0.toEpochMilli() + i));
    }
    // the first line read again by ingest, its time the ingest clock's (a line with none of its own)
    Instant reread = T0.plus(ID_RETENTION).minusSeconds(1);
    context.setCurrentStreamTimeMs(reread.toEpochMilli());
    p.process(new Record<>(CMD, refusal("a", 0, reread), reread.toEpochMilli()));
    assertThat(context.forwarded()).hasSize(1_001);
    Instant later = T0.plus(ID_RETENTION).plusSeconds(1);
    context.setCurrentStreamTimeMs(later.toEpochMilli());
    p.process(new Record<>(CMD, refusal("a", 0, later), later.toEpochMilli()));
    assertThat(context.forwarded()).as("past its retention an id is forgotten").hasSize(1_002);
  }

  @Test
  void theIdRetentionIsTheLongestWindowAndGracePlusWhatAnAgentMayWriteAhead() {
    assertThat(ID_RETENTION).isEqualTo(Duration.ofMinutes(11));
    Policy longer = Policy.ofRules(List.of(CountDetector.defaultRule(),
        CountDetector.rule("slow", Duration.ofHours(1), 50, Alert.Severity.WARNING, Duration.ofMinutes(2))));
    assertThat(ExactDuplicateProcessor.idRetention(longer)).isEqualTo(Duration.ofMinutes(67));
  }

  @Test
  void aCopyIsCaughtAmongItsCommandsLast32RefusalsAndCountsAgainFurtherBack() {
    MockProcessorContext<String, ViolationEvent> context = contextWithStore();
    ExactDuplicateProcessor p = processor();
    p.init(context);
    for (int i = 0; i < ExactDuplicateProcessor.KEPT; i++) {
      p.process(new Record<>(CMD, refusal("a", i, T0.plusMillis(i)), T0.toEpochMilli() + i));
    }
    p.process(new Record<>(CMD, refusal("a", 100, T0), T0.toEpochMilli())); // the first again: still held
    assertThat(context.forwarded()).hasSize(ExactDuplicateProcessor.KEPT);
    p.process(new Record<>(CMD, refusal("a", 101, T0.plusSeconds(5)), T0.toEpochMilli() + 5000)); // a new one
    p.process(new Record<>(CMD, refusal("a", 102, T0), T0.toEpochMilli())); // the first is now 33 back
    assertThat(context.forwarded()).hasSize(ExactDuplicateProcessor.KEPT + 2);
    p.process(new Record<>(CMD, refusal("a", 103, T0.plusMillis(20)), T0.toEpochMilli() + 20)); // 20th: still held
    assertThat(context.forwarded()).hasSize(ExactDuplicateProcessor.KEPT + 2);
  }

  @Test
  void hostileFieldsNeitherStopDetectionNorHideAnotherCommandsAlert() {
    java.util.Random random = new java.util.Random(23);
    String[] hostile = {"\ud800", "a\u0000b", "\u202eevil", "\u2028", "x".repeat(1 << 20), "\udfff\ud800", ""};
    for (int i = 0; i < 200; i++) {
      StringBuilder junk = new StringBuilder();
      for (int k = 0; k < 20; k++) {
        junk.append((char) random.nextInt(0x10000));
      }
      String h = i < hostile.length ? hostile[i] : junk.toString();
      ViolationEvent e = refusal("hostile/" + CMD + ".violations.jsonl", i, T0.plusMillis(i)).toBuilder()
          .commandId("HostileHostileHostile1").eventId(h + "@" + i).host(h).path(h).commandText(h).reason(h).build();
      violations.pipeInput("HostileHostileHostile1", e, T0.plusMillis(i));
    }
    for (int i = 0; i < 5; i++) {
      read("ci-runner-1/" + CMD + ".violations.jsonl", T0.plusSeconds(1).plusMillis(40L * i));
    }
    assertThat(alerts.readValuesToList()).extracting(Alert::commandId).contains(CMD);
  }

  @Test
  void fieldsThatRunIntoEachOtherDoNotMakeTheSameDigest() {
    ExactDuplicateProcessor p = processor();
    byte[] key = new byte[16];
    ViolationEvent a = refusal("f", 0, T0).toBuilder().host("ab").path("c").build();
    ViolationEvent b = refusal("f", 0, T0).toBuilder().host("a").path("bc").build();
    assertThat(p.digest(key, a)).isNotEqualTo(p.digest(key, b));
    assertThat(p.digest(key, a))
        .isEqualTo(p.digest(key, refusal("g", 9, T0).toBuilder().eventId("other").host("ab").path("c").build()));
  }

  @Test
  void stringsThatDifferOnlyInLoneSurrogatesDoNotMakeTheSameDigest() {
    // UTF-8 writes every lone surrogate as '?': hashing that encoding would let an agent make two
    // refusals one
    ExactDuplicateProcessor p = processor();
    byte[] key = new byte[16];
    ViolationEvent a = refusal("f", 0, T0).toBuilder().host("evil\uD800.example").build();
    ViolationEvent b = refusal("f", 0, T0).toBuilder().host("evil\uDC00.example").build();
    ViolationEvent c = refusal("f", 0, T0).toBuilder().host("evil?.example").build();
    assertThat(p.digest(key, a)).isNotEqualTo(p.digest(key, b)).isNotEqualTo(p.digest(key, c));
    assertThat(p.digest(key, b)).isNotEqualTo(p.digest(key, c));
  }

  @Test
  void aDigestDependsOnItsCommandsKeyWhichTheAgentNeverSees() {
    ExactDuplicateProcessor p = processor();
    ViolationEvent a = refusal("f", 0, T0);
    byte[] one = new byte[16];
    byte[] other = new byte[16];
    other[15] = 1;
    assertThat(p.digest(one, a)).isNotEqualTo(p.digest(other, a));
    // each command gets a key of its own, at random
    MockProcessorContext<String, ViolationEvent> context = contextWithStore();
    p.init(context);
    p.process(new Record<>(CMD, a, T0.toEpochMilli()));
    p.process(new Record<>("other-command-0123456789", a.toBuilder().eventId("its-own").commandId("other-command-0123456789").build(),
        T0.toEpochMilli()));
    WriteBackStore<ExactDuplicateProcessor.Recent> digests = context.getStateStore("exact-duplicates");
    assertThat(digests.get(CMD).key).isNotEqualTo(digests.get("other-command-0123456789").key).isNotEqualTo(new byte[16]);
  }

  @Test
  void aValueReadsBackAndBytesOfAnotherShapeReadAsNothing() {
    java.util.Random r = new java.util.Random(51);
    for (int n = 0; n < 2_000; n++) {
      byte[] key = new byte[16];
      r.nextBytes(key);
      ExactDuplicateProcessor.Recent recent = new ExactDuplicateProcessor.Recent(key);
      recent.seenAt = r.nextLong();
      for (int i = r.nextInt(3 * ExactDuplicateProcessor.KEPT); i > 0; i--) {
        recent.add(r.nextLong());
      }
      byte[] bytes = ExactDuplicateProcessor.encode(recent);
      assertThat(ExactDuplicateProcessor.encode(ExactDuplicateProcessor.decode(bytes))).isEqualTo(bytes);
      byte[] random = new byte[r.nextInt(600)];
      r.nextBytes(random);
      ExactDuplicateProcessor.decode(random); // never throws: at worst nothing remembered
    }
    // the first version's values: seen at, then 16-byte digests without a key
    assertThat(ExactDuplicateProcessor.decode(new byte[8 + 16 * 3])).isNull();
    assertThat(ExactDuplicateProcessor.decode(new byte[8])).isNull();
    // the second version's (SHA-256 digests): the same shape under version byte 2
    byte[] second = ExactDuplicateProcessor.encode(new ExactDuplicateProcessor.Recent(new byte[16]));
    second[0] = 2;
    assertThat(ExactDuplicateProcessor.decode(second)).isNull();
  }

  @Test
  void aValueOfTheFirstVersionStartsItsCommandAnewAndIsDeletedAtTheNextCommit() {
    // a store whose changelog holds a value the first version wrote: seen at, then an unkeyed 16-byte digest
    byte[] old = java.nio.ByteBuffer.allocate(8 + 16).putLong(T0.toEpochMilli()).putLong(7).putLong(9).array();
    org.apache.kafka.common.serialization.Serde<ExactDuplicateProcessor.Recent> writesOld = Serdes.serdeFrom(
        (topic, r) -> r == null ? null : old, ExactDuplicateProcessor.RECENT_SERDE.deserializer());
    MockProcessorContext<String, ViolationEvent> context = contextWithStore(writesOld);
    WriteBackStore<ExactDuplicateProcessor.Recent> digests = context.getStateStore("exact-duplicates");
    digests.put(CMD, new ExactDuplicateProcessor.Recent(new byte[16]));
    digests.flushCache();
    digests.clearCache();
    ExactDuplicateProcessor p = processor();
    p.init(context);
    assertThat(digests.get(CMD)).isNull();
    assertThat(digests.size()).isZero();
    ViolationEvent a = refusal("f", 0, T0);
    p.process(new Record<>(CMD, a, T0.toEpochMilli()));
    p.process(new Record<>(CMD, a.toBuilder().eventId("again").build(), T0.toEpochMilli()));
    assertThat(context.forwarded()).hasSize(1); // counted anew, and a copy of it caught
    assertThat(digests.get(CMD).size).isEqualTo(1);
  }

  private static ExactDuplicateProcessor processor() {
    return new ExactDuplicateProcessor("exact-duplicates", ID_RETENTION, true);
  }

  /** A processor context holding the processor's two stores, empty, stream time at T0. */
  private static MockProcessorContext<String, ViolationEvent> contextWithStore() {
    return contextWithStore(ExactDuplicateProcessor.RECENT_SERDE);
  }

  private static MockProcessorContext<String, ViolationEvent> contextWithStore(
      org.apache.kafka.common.serialization.Serde<ExactDuplicateProcessor.Recent> serde) {
    MockProcessorContext<String, ViolationEvent> context = new MockProcessorContext<>();
    WriteBackStore<ExactDuplicateProcessor.Recent> store = WriteBackStore.builder("exact-duplicates",
        serde).withLoggingDisabled().build();
    store.init(context.getStateStoreContext(), store);
    context.addStateStore(store);
    WindowStore<String, byte[]> ids = Stores.windowStoreBuilder(
        Stores.inMemoryWindowStore(ExactDuplicateProcessor.idStore("exact-duplicates"), ID_RETENTION, Duration.ofMillis(1), false),
        Serdes.String(), Serdes.ByteArray()).withLoggingDisabled().withCachingDisabled().build();
    ids.init(context.getStateStoreContext(), ids);
    context.addStateStore(ids);
    context.setCurrentStreamTimeMs(T0.toEpochMilli());
    return context;
  }

  private static double duplicates() {
    Double v = io.prometheus.client.CollectorRegistry.defaultRegistry.getSampleValue(
        "knockwatch_streams_exact_duplicates_total", new String[] {"source"}, new String[] {"srt-violation"});
    return v == null ? 0 : v;
  }
}
