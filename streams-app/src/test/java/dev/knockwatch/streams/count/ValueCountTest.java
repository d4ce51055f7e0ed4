package dev.knockwatch.streams.count;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.DetectionDriver;
import dev.knockwatch.streams.detect.DetectProcessor;
import dev.knockwatch.streams.state.WriteBackStore;
import dev.knockwatch.streams.detect.ValueCountDetector;
import dev.knockwatch.streams.rules.Rule;
import dev.knockwatch.streams.rules.RuleMatch;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code value-count}, "10 distinct hosts in any 5 minutes" (the shipped {@code scanning} rule):
 * a command that tries many hosts fires once, at the tenth distinct one; the same host again and
 * again, or ten spread wider than the window, do not; each command keeps at most the threshold's
 * values, however many it tries.
 */
class ValueCountTest {

  static final Instant T0 = Instant.parse("2026-11-29T10:00:00Z");
  static final String CMD = "ScanScanScanScanScan01";
  static final String OTHER = "ScanScanScanScanScan02";
  static final Rule SCANNING = Rule.of("scanning", Alert.Severity.PAGE,
      new ValueCountDetector.Settings(Duration.ofMinutes(5), 10, Duration.ofMinutes(1), SlidingCount.Field.HOST));

  @TempDir Path state;
  DetectionDriver d;
  int seq;

  @BeforeEach
  void setUp() {
    d = DetectionDriver.start(List.of(SCANNING), state, 10 * 1024 * 1024);
  }

  @AfterEach
  void tearDown() {
    d.close();
  }

  private void refuse(String command, String host, int port, Instant at) {
    seq++;
    d.violations.pipeInput(command, ViolationEvent.builder().eventId("e" + seq).commandId(command).agentId("ci-runner-1")
        .source("srt-violation").kind(Kind.NETWORK).action("network-outbound").host(host).port(port)
        .reason("host is not on the allow list").observedAt(at).build(), at);
  }

  private List<Alert> firing() {
    return d.alerts.readValuesToList().stream().filter(a -> a.status() == Alert.Status.FIRING).toList();
  }

  @Test
  void theTenthDistinctHostWithinTheWindowFiresOnce() {
    for (int i = 0; i < 9; i++) {
      refuse(CMD, "host" + i + ".example", 443, T0.plusSeconds(10L * i));
      refuse(CMD, "host0.example", 443, T0.plusSeconds(10L * i + 1)); // the same host again: not a new value
    }
    assertThat(firing()).isEmpty();
    refuse(CMD, "host9.example", 443, T0.plusSeconds(100));
    assertThat(firing()).singleElement().satisfies(a -> {
      assertThat(a.rule()).isEqualTo("scanning");
      assertThat(a.commandId()).isEqualTo(CMD);
      assertThat(a.severity()).isEqualTo(Alert.Severity.PAGE);
      assertThat(a.count()).isEqualTo(10);
      // each value at its newest sighting: host0 last at 81 s, host1 at 10 s is the oldest of the ten
      assertThat(a.summary()).startsWith("command tried 10 distinct host values within 5m (10 refusals in 1m30s so far;");
    });
    for (int i = 10; i < 40; i++) {
      refuse(CMD, "host" + i + ".example", 443, T0.plusSeconds(100 + i));
    }
    assertThat(d.alerts.readValuesToList()).as("one episode, one alert: updates, never a second firing")
        .allSatisfy(a -> assertThat(a.fingerprint()).isEqualTo(Alert.fingerprintOf("scanning", CMD)));
  }

  @Test
  void oneHostOnManyPortsOrTenHostsSpreadWiderThanTheWindowDoNotFire() {
    for (int port = 1; port <= 50; port++) {
      refuse(CMD, "one.example", port, T0.plusSeconds(port)); // field host: one value, whatever the port
    }
    for (int i = 0; i < 10; i++) {
      refuse(OTHER, "slow" + i + ".example", 443, T0.plusSeconds(40L * i)); // 10 hosts over 6 minutes
    }
    assertThat(firing()).isEmpty();
  }

  @Test
  void aHostSeenAgainCountsAtItsNewestTime() {
    // 9 hosts early, then all of them again 4 minutes later with a tenth: 10 within 5 minutes of the newest
    for (int i = 0; i < 9; i++) {
      refuse(CMD, "h" + i + ".example", 443, T0.plusSeconds(i));
    }
    for (int i = 0; i < 9; i++) {
      refuse(CMD, "h" + i + ".example", 443, T0.plusSeconds(400 + i));
    }
    assertThat(firing()).isEmpty();
    refuse(CMD, "h9.example", 443, T0.plusSeconds(420));
    assertThat(firing()).hasSize(1);
  }

  @Test
  void aCommandKeepsAtMostTheThresholdOfValues() {
    Random random = new Random(28);
    @SuppressWarnings("unchecked")
    WriteBackStore<DetectProcessor.Slices> store = (WriteBackStore<DetectProcessor.Slices>) d.driver.getStateStore("detect");
    Instant at = T0;
    for (int i = 0; i < 2_000; i++) {
      at = at.plusSeconds(34); // ten span 306 s, more than 5 minutes: no crossing, so the sightings are what is kept
      refuse(CMD, Long.toHexString(random.nextLong()) + ".example", 443, at);
      if (i % 100 == 99) {
        assertThat(((RecentRefusals) store.get(CMD).slice(0)).recent()).hasSizeLessThanOrEqualTo(10);
      }
    }
    assertThat(firing()).isEmpty();
  }

  @Test
  void theRulesTagsRunbookAndLabelsRideOnItsAlerts() {
    d.close();
    Alert.Meta meta = new Alert.Meta(List.of("attack.t1046"), "https://runbooks.example/scan",
        java.util.Map.of("team", "soc"), java.util.Map.of());
    Rule described = new Rule("scanning", Alert.Severity.PAGE, false, RuleMatch.ANY,
        Rule.DEFAULT_RESOLVE_AFTER, meta, dev.knockwatch.streams.rules.Grain.COMMAND, SCANNING.settings());
    d = DetectionDriver.start(List.of(described), state.resolve("described"), 0);
    for (int i = 0; i < 10; i++) {
      refuse(CMD, "m" + i + ".example", 443, T0.plusSeconds(i));
    }
    assertThat(d.alerts.readValuesToList()).singleElement().satisfies(a -> assertThat(a.meta()).isEqualTo(meta));
  }
}
