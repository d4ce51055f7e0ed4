package dev.knockwatch.streams.count;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.DetectionDriver;
import dev.knockwatch.streams.detect.CountDetector;
import dev.knockwatch.streams.rules.Rule;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The count detector in aligned windows ({@code hop}; here tumbling: the hop is the window) on a
 * TopologyTestDriver, with the record cache ON (it must not hide crossings). The default, "N in
 * any window", is {@link SlidingCountTest}'s.
 */
class ThresholdCrossingTest {

  static final Instant T0 = Instant.parse("2026-11-29T18:45:00Z");          // a window start
  static final Instant T0_PLUS_1M = T0.plusSeconds(60);
  static final Instant T0_PLUS_4M59 = T0.plusSeconds(299);
  static final Instant T0_PLUS_5M = T0.plusSeconds(300);                   // the next window
  static final Instant T0_PLUS_7M = T0.plusSeconds(420);                   // first window closed + 1m grace
  static final String CMD_A = "AAAAAAAAAAAAAAAAAAAAAA";
  static final String CMD_B = "BBBBBBBBBBBBBBBBBBBBBB";

  static final Rule RULE = Rule.of("persistent-retry", Alert.Severity.WARNING,
      new CountDetector.Settings(Duration.ofMinutes(5), Duration.ofMinutes(5), 5, Duration.ofMinutes(1)));

  @TempDir Path state;
  DetectionDriver d;
  TopologyTestDriver driver;
  TestInputTopic<String, ViolationEvent> violations;
  TestOutputTopic<String, Alert> alerts;
  int seq;

  /** The record cache: on here (it must not hide crossings), off in {@link ThresholdCrossingCacheOffTest}. */
  long cacheBytes() {
    return 10 * 1024 * 1024;
  }

  @BeforeEach
  void setUp() {
    d = DetectionDriver.start(List.of(RULE), state, cacheBytes());
    driver = d.driver;
    violations = d.violations;
    alerts = d.alerts;
  }

  @AfterEach
  void tearDown() {
    d.close();
  }

  @Test
  void fiveRefusalsInOneWindowAlertOnceAtTheFifth() {
    d.refuseTimes(CMD_A, 4, T0, Duration.ofSeconds(10));
    assertThat(alerts.isEmpty()).as("no alert before the threshold").isTrue();
    d.refuse(CMD_A, T0_PLUS_1M);
    List<org.apache.kafka.streams.test.TestRecord<String, Alert>> out = alerts.readRecordsToList();
    assertThat(out).hasSize(1);
    Alert a = out.get(0).value();
    assertThat(out.get(0).key()).isEqualTo(a.fingerprint());
    assertThat(a).isEqualTo(Alert.firing("persistent-retry", CMD_A)
        .fingerprint(Alert.fingerprintOf("persistent-retry", CMD_A)).agentId("ci-runner-1").role("default").count(5)
        .windowStart(T0).windowEnd(T0_PLUS_5M).firstSeen(T0).lastSeen(T0_PLUS_1M)
        .summary("command refused 5 times within 5m (threshold 5); last: example.com:443")
        .sampleEventIds(List.of("e1", "e2", "e3", "e4", "e5")).sources(List.of("srt-violation"))
        .policyVersion("none").targets(List.of(new Alert.Target("example.com:443", 5))).build());
  }

  @Test
  void theAlertNamesTheFiveMostRefusedTargetsAndCountsAllOfThem() {
    // 25 hosts: host-k refused k+1 times (host-24 most); only 20 are kept by name, the rest are "(others)"
    int n = 0;
    for (int k = 0; k < 25; k++) {
      for (int i = 0; i <= k; i++) {
        seq++;
        ViolationEvent e = ViolationEvent.builder().eventId("e" + seq).commandId(CMD_A).agentId("ci-runner-1")
            .source("srt-violation").kind(Kind.NETWORK).action("network-outbound").host("host-" + k).port(443)
            .observedAt(T0.plusMillis(n)).build();
        violations.pipeInput(CMD_A, e, T0.plusMillis(n++));
      }
    }
    d.refuse(CMD_B, T0.plusSeconds(40)); // stream time passes the lifecycle's 30 s throttle: the update goes out
    List<Alert> out = alerts.readValuesToList();
    Alert last = out.stream().filter(a -> a.commandId().equals(CMD_A)).reduce((a, b) -> b).orElseThrow();
    assertThat(last.count()).isEqualTo(325);
    // hosts 20..24 came after 20 names were taken: their 21+22+23+24+25 refusals count as "(others)"
    assertThat(last.targets()).containsExactly(new Alert.Target("(others)", 115), new Alert.Target("host-19:443", 20),
        new Alert.Target("host-18:443", 19), new Alert.Target("host-17:443", 18), new Alert.Target("host-16:443", 17));
  }

  @Test
  void fourRefusalsDoNotAlert() {
    d.refuseTimes(CMD_A, 4, T0, Duration.ofSeconds(30));
    assertThat(alerts.isEmpty()).isTrue();
  }

  @Test
  void furtherRefusalsInTheSameWindowUpdateTheAlertAtMostOnceIn30Seconds() {
    d.refuseTimes(CMD_A, 12, T0, Duration.ofSeconds(10)); // crossing at 40 s, then one every 10 s to 110 s
    List<Alert> out = alerts.readValuesToList();
    assertThat(out).extracting(Alert::fingerprint).containsOnly(out.get(0).fingerprint());
    assertThat(out).extracting(Alert::status).containsOnly(Alert.Status.FIRING);
    assertThat(out).extracting(Alert::count).containsExactly(5L, 8L, 11L);
    assertThat(out).extracting(Alert::lastSeen)
        .containsExactly(T0.plusSeconds(40), T0.plusSeconds(70), T0.plusSeconds(100));
    assertThat(out.get(2).summary()).startsWith("command refused 11 times within 5m");
  }

  @Test
  void theAlertDoesNotWaitForTheWindowToClose() {
    d.refuseTimes(CMD_A, 5, T0, Duration.ofSeconds(1));
    // stream time is still inside the window: nothing has closed it
    assertThat(alerts.readValuesToList()).extracting(Alert::count).containsExactly(5L);
  }

  @Test
  void refusalsSplitOverTwoWindowsDoNotAddUp() {
    d.refuseTimes(CMD_A, 3, T0_PLUS_4M59.minusSeconds(2), Duration.ofSeconds(1));
    d.refuseTimes(CMD_A, 3, T0_PLUS_5M, Duration.ofSeconds(1));
    assertThat(alerts.isEmpty()).isTrue();
  }

  @Test
  void eachWindowThatCrossesAlertsOnceWithItsOwnBounds() {
    d.refuseTimes(CMD_A, 5, T0, Duration.ofSeconds(5));
    d.refuseTimes(CMD_A, 5, T0_PLUS_5M, Duration.ofSeconds(5));
    List<Alert> out = alerts.readValuesToList();
    assertThat(out).extracting(Alert::windowStart).containsExactly(T0, T0_PLUS_5M);
    assertThat(out).extracting(Alert::fingerprint).containsOnly(out.get(0).fingerprint());
  }

  @Test
  void commandsAreCountedApart() {
    for (int i = 0; i < 5; i++) {
      d.refuse(CMD_A, T0.plusSeconds(i));
      d.refuse(CMD_B, T0.plusSeconds(i));
    }
    d.refuse(CMD_B, T0.plusSeconds(30));
    List<Alert> out = alerts.readValuesToList();
    assertThat(out).extracting(Alert::commandId).containsExactlyInAnyOrder(CMD_A, CMD_B);
    assertThat(out).extracting(Alert::fingerprint).doesNotHaveDuplicates();
  }

  @Test
  void aRefusalArrivingAfterItsWindowsGraceIsNotCounted() {
    d.refuseTimes(CMD_A, 4, T0, Duration.ofSeconds(1));
    d.refuse(CMD_B, T0_PLUS_7M);                 // stream time passes the first window's end + grace
    d.refuse(CMD_A, T0_PLUS_1M);                 // late: would have been the fifth
    assertThat(alerts.isEmpty()).isTrue();
  }

  @Test
  void aRefusalLateButWithinGraceStillCounts() {
    d.refuseTimes(CMD_A, 4, T0, Duration.ofSeconds(1));
    d.refuse(CMD_B, T0_PLUS_5M.plusSeconds(30)); // past the window's end, inside the 1m grace
    d.refuse(CMD_A, T0_PLUS_1M);
    assertThat(alerts.readValuesToList()).extracting(Alert::commandId).containsExactly(CMD_A);
  }

  @Test
  void everyOneOfManyCrossingsIsSeenWithTheCacheOn() {
    int commands = 300;
    for (int round = 0; round < 5; round++) {
      for (int c = 0; c < commands; c++) {
        d.refuse(String.format("cmd-%019d", c), T0.plusSeconds(round));
      }
    }
    assertThat(alerts.readValuesToList()).extracting(Alert::commandId).doesNotHaveDuplicates().hasSize(commands);
  }
}
