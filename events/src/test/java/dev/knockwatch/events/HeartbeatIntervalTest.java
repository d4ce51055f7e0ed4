package dev.knockwatch.events;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

/** How often knockwatch's group members heartbeat: 5 s, a third of a shorter session, or the user's own. */
class HeartbeatIntervalTest {

  @Test
  void fiveSecondsUnlessTheUsersSessionIsShorterThanFifteen() {
    assertThat(Topics.heartbeatIntervalMs(Map.of())).isEqualTo(OptionalInt.of(5_000));
    assertThat(Topics.heartbeatIntervalMs(Map.of("session.timeout.ms", "45000"))).isEqualTo(OptionalInt.of(5_000));
    assertThat(Topics.heartbeatIntervalMs(Map.of("session.timeout.ms", "6000"))).isEqualTo(OptionalInt.of(2_000));
    assertThat(Topics.heartbeatIntervalMs(Map.of("session.timeout.ms", 9_000))).isEqualTo(OptionalInt.of(3_000));
  }

  @Test
  void aSessionOrIntervalGivenUnderAPrefixCounts() {
    assertThat(Topics.heartbeatIntervalMs(Map.of("main.consumer.session.timeout.ms", "6000"), "consumer.", "main.consumer."))
        .isEqualTo(OptionalInt.of(2_000));
    assertThat(Topics.heartbeatIntervalMs(Map.of("consumer.heartbeat.interval.ms", "1000"), "consumer.", "main.consumer."))
        .isEmpty();
  }

  @Test
  void theUsersIntervalStands() {
    assertThat(Topics.heartbeatIntervalMs(Map.of("heartbeat.interval.ms", "3000", "session.timeout.ms", "6000"))).isEmpty();
  }
}
