package dev.knockwatch.streams.count;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.Alert;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

class WindowCountTopTest {

  /** The most refused five, most first; ties in the order first refused (a stable sort's). */
  private static List<Alert.Target> bySort(Map<String, Long> targets) {
    return targets.entrySet().stream()
        .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
        .limit(5).map(e -> new Alert.Target(e.getKey(), e.getValue())).toList();
  }

  @Test
  void theTopFiveAreWhatAStableSortGivesForAnyTally() {
    Random r = new Random(66);
    for (int n = 0; n < 20_000; n++) {
      Map<String, Long> targets = new LinkedHashMap<>();
      int size = 1 + r.nextInt(WindowCount.MAX_TARGETS + 1);
      for (int i = 0; i < size; i++) {
        // few distinct counts, so ties are common
        targets.put("t" + i, 1L + r.nextInt(r.nextBoolean() ? 3 : 1_000));
      }
      assertThat(WindowCount.top(targets)).as("%s", targets).isEqualTo(bySort(targets));
    }
  }

  @Test
  void noTallyHasNoTop() {
    assertThat(WindowCount.top(Map.of())).isNull();
    assertThat(WindowCount.top(null)).isNull();
  }
}
