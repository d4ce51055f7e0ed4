package dev.knockwatch.streams.detect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.knockwatch.events.Alert.Severity;
import dev.knockwatch.streams.count.RecentRefusals;
import dev.knockwatch.streams.rules.Rule;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Serde;
import org.junit.jupiter.api.Test;

/** One key's state of every stateful rule: its bytes read back, and across a rules change each rule finds only its own slice. */
class DetectStateTest {

  static final Rule RETRY = CountDetector.rule("persistent-retry", Duration.ofMinutes(5), 5, Severity.WARNING, Duration.ofMinutes(1));
  static final Rule BYPASS = Rule.of("bypass", Severity.PAGE, new BypassDetector.Settings(Duration.ofMinutes(2)));
  static final Rule ESCAPE = Rule.of("sandbox-escape", Severity.PAGE, new SandboxEscapeDetector.Settings(Duration.ofMinutes(30)));
  static final Rule OFF_ROLE = Rule.of("off-role-host", Severity.PAGE, new OffRoleDetector.Settings());

  static final RecentRefusals RECENT = new RecentRefusals(List.of(
      new RecentRefusals.Sighting(1L, "e1", "example.com:443", "ci-runner-1"), new RecentRefusals.Sighting(2L, null, null, null)),
      null);

  private static byte[] write(List<Rule> rules, Object... slices) {
    return DetectProcessor.serde(rules).serializer().serialize("t", new DetectProcessor.Slices(slices));
  }

  @Test
  void everySliceReadsBackEqualAndARuleWithoutStateHasNoSlot() {
    List<Rule> rules = List.of(RETRY, OFF_ROLE, BYPASS, ESCAPE);
    Serde<DetectProcessor.Slices> serde = DetectProcessor.serde(rules);
    DetectProcessor.Slices s = new DetectProcessor.Slices(
        new Object[] {RECENT, new BypassDetector.ProxyRefusal(7L, "evil.example", 443), 9L});
    assertThat(serde.deserializer().deserialize("t", serde.serializer().serialize("t", s))).isEqualTo(s);
    DetectProcessor.Slices some = new DetectProcessor.Slices(new Object[] {null, null, 9L});
    assertThat(serde.deserializer().deserialize("t", serde.serializer().serialize("t", some))).isEqualTo(some);
  }

  @Test
  void afterARulesChangeEachRuleFindsItsOwnSliceByIdAndDetectorAndNoOther() {
    byte[] before = write(List.of(RETRY, BYPASS, ESCAPE), RECENT, new BypassDetector.ProxyRefusal(7L, "evil.example", 443), 9L);
    // bypass removed, a rule added first, and the escape rule's id now naming a count
    Rule renamed = CountDetector.rule("sandbox-escape", Duration.ofMinutes(5), 3, Severity.INFO, Duration.ofMinutes(1));
    Rule added = CountDetector.rule("new-rule", Duration.ofMinutes(5), 3, Severity.INFO, Duration.ofMinutes(1));
    DetectProcessor.Slices after = DetectProcessor.serde(List.of(added, RETRY, renamed)).deserializer().deserialize("t", before);
    assertThat(after).isEqualTo(new DetectProcessor.Slices(new Object[] {null, RECENT, null}));
  }

  @Test
  void bytesOfAnotherFormatAreASerializationErrorNotAnotherState() {
    Serde<DetectProcessor.Slices> serde = DetectProcessor.serde(List.of(RETRY, BYPASS));
    byte[] good = write(List.of(RETRY, BYPASS), RECENT, null);
    Random random = new Random(46);
    for (int i = 0; i < 2_000; i++) {
      byte[] b = good.clone();
      b[random.nextInt(b.length)] = (byte) random.nextInt(256);
      try {
        serde.deserializer().deserialize("t", b);
      } catch (SerializationException expected) {
        // a damaged value is refused as what it is
      }
    }
    assertThatThrownBy(() -> serde.deserializer().deserialize("t", new byte[] {9, 0, 1})).isInstanceOf(SerializationException.class)
        .hasMessageContaining("not a detection state value");
    assertThatThrownBy(() -> serde.deserializer().deserialize("t", new byte[] {1, 0, 1, 0, 2}))
        .isInstanceOf(SerializationException.class);
  }
}
