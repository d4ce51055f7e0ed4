package dev.knockwatch.streams.count;

import dev.knockwatch.streams.detect.CountDetector;
import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.DetectionDriver;
import dev.knockwatch.streams.detect.DetectProcessor;
import dev.knockwatch.streams.state.WriteBackStore;
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
 * The default count detector, "5 in any 5 minutes", on a TopologyTestDriver with the record cache
 * on: refusals that straddle an aligned boundary count together, a crossing alerts at once, one
 * episode is one alert, and late refusals count as far as the grace allows.
 */
class SlidingCountTest {

  static final Instant T0 = Instant.parse("2026-11-29T10:00:00Z");
  static final Instant BOUNDARY = Instant.parse("2026-11-29T10:05:00Z"); // where a tumbling window ends
  static final String CMD_A = "AAAAAAAAAAAAAAAAAAAAAA";
  static final String CMD_B = "BBBBBBBBBBBBBBBBBBBBBB";
  /** The rules' state: the one rule's slice is the first. */
  static final String STORE = "detect";

  /** 5 in any 5m, 1m grace, 10m quiet time: the default rule. */
  static final Rule RULE = CountDetector.defaultRule();

  @TempDir Path state;
  DetectionDriver d;
  TopologyTestDriver driver;
  TestInputTopic<String, ViolationEvent> violations;
  TestOutputTopic<String, Alert> alerts;

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

  private List<Alert> firing() {
    return alerts.readValuesToList().stream().filter(a -> a.status() == Alert.Status.FIRING).toList();
  }

  @Test
  void fourBeforeAndFourAfterAnAlignedBoundaryWarnAtTheFifth() {
    // 8 refusals in 35 s, 4 before 10:05:00 and 4 after: a tumbling window saw 4 and 4
    d.refuseTimes(CMD_A, 4, BOUNDARY.minusSeconds(20), Duration.ofSeconds(5));
    assertThat(alerts.isEmpty()).isTrue();
    d.refuse(CMD_A, BOUNDARY);
    List<Alert> out = alerts.readValuesToList();
    assertThat(out).singleElement().isEqualTo(Alert.firing("persistent-retry", CMD_A)
        .fingerprint(Alert.fingerprintOf("persistent-retry", CMD_A)).agentId("ci-runner-1").role("default").count(5)
        .windowStart(BOUNDARY.minusSeconds(20)).windowEnd(BOUNDARY.plusSeconds(280))
        .firstSeen(BOUNDARY.minusSeconds(20)).lastSeen(BOUNDARY)
        .summary("command refused 5 times in 20s (threshold 5 within 5m); last: example.com:443")
        .sampleEventIds(List.of("e1", "e2", "e3", "e4", "e5")).sources(List.of("srt-violation"))
        .policyVersion("none").targets(List.of(new Alert.Target("example.com:443", 5))).build());
    d.refuseTimes(CMD_A, 3, BOUNDARY.plusSeconds(5), Duration.ofSeconds(5));
    d.refuse(CMD_B, BOUNDARY.plusSeconds(60)); // stream time passes the 30 s throttle
    assertThat(alerts.readValuesToList()).extracting(Alert::count).containsExactly(8L);
  }

  @Test
  void eightInEightSecondsAcrossABoundaryWarn() {
    d.refuseTimes(CMD_A, 8, BOUNDARY.minusSeconds(4), Duration.ofSeconds(1));
    assertThat(firing()).extracting(Alert::commandId).containsExactly(CMD_A);
  }

  @Test
  void exactlyFiveInOneSpanWarnTheMomentTheFifthArrives() {
    d.refuseTimes(CMD_A, 4, T0, Duration.ofSeconds(74));
    assertThat(alerts.isEmpty()).isTrue();
    d.refuse(CMD_A, T0.plusSeconds(299)); // the fifth, 299 s after the first: within 5m
    assertThat(alerts.readValuesToList()).extracting(Alert::count).containsExactly(5L);
  }

  @Test
  void fiveThatSpanTheWholeWindowDoNotWarn() {
    d.refuseTimes(CMD_A, 5, T0, Duration.ofSeconds(75)); // first and fifth exactly 5m apart
    assertThat(alerts.isEmpty()).isTrue();
  }

  @Test
  void fifteenSpreadEightySecondsApartStayQuiet() {
    d.refuseTimes(CMD_A, 15, T0, Duration.ofSeconds(80)); // any 5 span 320 s
    assertThat(alerts.isEmpty()).isTrue();
  }

  @Test
  void fourRefusalsDoNotWarn() {
    d.refuseTimes(CMD_A, 4, T0, Duration.ofSeconds(1));
    assertThat(alerts.isEmpty()).isTrue();
  }

  @Test
  void oneEpisodeIsOneAlertUpdatedAtMostOnceIn30Seconds() {
    d.refuseTimes(CMD_A, 12, T0, Duration.ofSeconds(10)); // crossing at 40 s, then one every 10 s
    List<Alert> out = alerts.readValuesToList();
    assertThat(out).extracting(Alert::fingerprint).containsOnly(out.get(0).fingerprint());
    assertThat(out).extracting(Alert::windowStart).containsOnly(T0);
    assertThat(out).extracting(Alert::count).containsExactly(5L, 8L, 11L);
    assertThat(out.get(2).summary()).isEqualTo(
        "command refused 11 times in 1m40s (threshold 5 within 5m); last: example.com:443");
  }

  @Test
  void anEpisodeGoesOnWhileRefusalsComeWithinTheQuietTime() {
    d.refuseTimes(CMD_A, 5, T0, Duration.ofSeconds(1));
    d.refuse(CMD_A, T0.plusSeconds(4 + 9 * 60)); // 9 min later: the same episode, not a fresh count
    List<Alert> out = alerts.readValuesToList();
    assertThat(out).extracting(Alert::status).containsOnly(Alert.Status.FIRING);
    assertThat(out).extracting(Alert::count).containsExactly(5L, 6L);
    assertThat(out).extracting(Alert::windowStart).containsOnly(T0);
  }

  @Test
  void afterTheQuietTimeTheCountStartsAfreshAndANewEpisodeIsANewAlert() {
    d.refuseTimes(CMD_A, 5, T0, Duration.ofSeconds(1));
    Instant later = T0.plusSeconds(4 + 11 * 60); // past the 10 min quiet time
    d.refuseTimes(CMD_A, 4, later, Duration.ofSeconds(1));
    assertThat(firing()).extracting(Alert::count).as("four after the episode are a fresh count").containsExactly(5L);
    d.refuse(CMD_A, later.plusSeconds(4));
    List<Alert> all = alerts.readValuesToList();
    assertThat(all).filteredOn(a -> a.status() == Alert.Status.FIRING)
        .extracting(Alert::windowStart, Alert::count).containsExactly(org.assertj.core.groups.Tuple.tuple(later, 5L));
  }

  @Test
  void refusalsOutOfOrderCountByTheirOwnTimes() {
    for (int i = 4; i >= 0; i--) {
      d.refuse(CMD_A, T0.plusSeconds(10L * i));
    }
    assertThat(alerts.readValuesToList()).singleElement().satisfies(a -> {
      assertThat(a.firstSeen()).isEqualTo(T0);
      assertThat(a.lastSeen()).isEqualTo(T0.plusSeconds(40));
      assertThat(a.windowStart()).isEqualTo(T0);
    });
  }

  @Test
  void aRefusalLateButWithinGraceStillCounts() {
    d.refuseTimes(CMD_A, 4, T0, Duration.ofSeconds(1));
    d.refuse(CMD_B, T0.plusSeconds(6 * 60 + 30)); // stream time: the late one's span ends at 6m, grace to 7m
    d.refuse(CMD_A, T0.plusSeconds(60));
    assertThat(alerts.readValuesToList()).extracting(Alert::commandId).containsExactly(CMD_A);
  }

  @Test
  void aRefusalLaterThanItsSpanAndGraceIsNotCounted() {
    d.refuseTimes(CMD_A, 4, T0, Duration.ofSeconds(1));
    d.refuse(CMD_B, T0.plusSeconds(7 * 60)); // stream time: 1m + 5m + 1m grace
    d.refuse(CMD_A, T0.plusSeconds(60));
    assertThat(alerts.isEmpty()).isTrue();
  }

  @Test
  void commandsAreCountedApart() {
    for (int i = 0; i < 4; i++) {
      d.refuse(CMD_A, T0.plusSeconds(i));
      d.refuse(CMD_B, T0.plusSeconds(i));
    }
    d.refuse(CMD_B, T0.plusSeconds(30));
    assertThat(firing()).extracting(Alert::commandId).containsExactly(CMD_B);
  }

  @Test
  void everyOneOfManyCrossingsIsSeen() {
    int commands = 300;
    for (int round = 0; round < 5; round++) {
      for (int c = 0; c < commands; c++) {
        d.refuse(String.format("cmd-%019d", c), T0.plusSeconds(round));
      }
    }
    assertThat(alerts.readValuesToList()).extracting(Alert::commandId).doesNotHaveDuplicates().hasSize(commands);
  }

  @Test
  void aCommandHoldsAtMostThresholdTimesAndLeavesTheStoreWhenItCanNoLongerCross() {
    d.refuseTimes(CMD_A, 100, T0, Duration.ofSeconds(80)); // never 5 in 5m
    @SuppressWarnings("unchecked")
    WriteBackStore<DetectProcessor.Slices> store = (WriteBackStore<DetectProcessor.Slices>) driver.getStateStore(STORE);
    assertThat(((RecentRefusals) store.get(CMD_A).slice(0)).recent()).hasSize(5);
    Instant last = T0.plusSeconds(99 * 80);
    d.refuse(CMD_B, last.plus(Duration.ofMinutes(11)).plusSeconds(61)); // 2 x 5m + 1m grace, and a sweep
    assertThat(store.get(CMD_A)).isNull();
    assertThat(store.get(CMD_B)).isNotNull();
    assertThat(alerts.isEmpty()).isTrue();
  }
}
