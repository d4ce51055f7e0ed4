package dev.knockwatch.events;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** One grammar for every duration knockwatch reads; anything else is empty, never an exception. */
class DurationsTest {

  @Test
  void countsWithUnitsAndIsoDurations() {
    assertThat(Durations.parse("250ms")).hasValue(Duration.ofMillis(250));
    assertThat(Durations.parse("30s")).hasValue(Duration.ofSeconds(30));
    assertThat(Durations.parse(" 5m ")).hasValue(Duration.ofMinutes(5));
    assertThat(Durations.parse("1h")).hasValue(Duration.ofHours(1));
    assertThat(Durations.parse("30d")).hasValue(Duration.ofDays(30));
    assertThat(Durations.parse("0s")).hasValue(Duration.ZERO);
    assertThat(Durations.parse("PT2H")).hasValue(Duration.ofHours(2));
    assertThat(Durations.parse("P1D")).hasValue(Duration.ofDays(1));
  }

  @ParameterizedTest
  @ValueSource(strings = {"", "soon", "5x", "5", "m5", "-5m", "5 m", "1h30m", "PT-2H", "P", "99999999999999999999s",
      "999999999999999999d", "PT99999999999999999999H", "５m", "5m\u0000", "\u202E5m"})
  void anythingElseIsEmpty(String text) {
    assertThat(Durations.parse(text)).isEmpty();
  }

  @Test
  void nullIsEmpty() {
    assertThat(Durations.parse(null)).isEmpty();
  }

  @Test
  void formatSpellsTheLargestExactUnitAndReadsBack() {
    assertThat(Durations.format(java.time.Duration.ofDays(30))).isEqualTo("30d");
    assertThat(Durations.format(java.time.Duration.ofMinutes(90))).isEqualTo("90m");
    assertThat(Durations.format(java.time.Duration.ofSeconds(25))).isEqualTo("25s");
    assertThat(Durations.format(java.time.Duration.ofMillis(1500))).isEqualTo("1500ms");
    assertThat(Durations.format(java.time.Duration.ZERO)).isEqualTo("0d");
    assertThat(Durations.format(java.time.Duration.ofNanos(5))).isEqualTo("PT0.000000005S");
    java.util.Random r = new java.util.Random(3);
    for (int i = 0; i < 10_000; i++) {
      java.time.Duration d = switch (i % 3) {
        case 0 -> java.time.Duration.ofMillis((r.nextLong() >>> 1) >>> r.nextInt(63));
        case 1 -> java.time.Duration.ofSeconds(r.nextLong() >>> 1, r.nextInt(1_000_000_000));
        default -> java.time.Duration.ofSeconds(r.nextInt(100_000), 1_000_000L * r.nextInt(1000));
      };
      assertThat(Durations.parse(Durations.format(d))).as(d.toString()).contains(d);
    }
  }

  @Test
  void aWaitDoublesFromTheFirstToItsCap() {
    Duration first = Duration.ofMillis(500);
    Duration cap = Duration.ofSeconds(30);
    Duration w = Duration.ZERO;
    List<Long> waits = new java.util.ArrayList<>();
    for (int i = 0; i < 9; i++) {
      w = Durations.doubled(w, first, cap);
      waits.add(w.toMillis());
    }
    assertThat(waits).containsExactly(500L, 1000L, 2000L, 4000L, 8000L, 16000L, 30000L, 30000L, 30000L);
  }
}
