package dev.knockwatch.streams.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import io.prometheus.client.CollectorRegistry;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class FiringAlertsTest {

  static Double firing(String rule) {
    return CollectorRegistry.defaultRegistry.getSampleValue("knockwatch_streams_alerts_firing",
        new String[] {"rule", "severity", "mode"}, new String[] {rule, "page", "enforce"});
  }

  @Test
  void tasksAreSummedAndATaskThatMovesAwayTakesItsAlertsWithIt() {
    List<String> key = List.of("firing-test-rule", "page", "enforce");
    FiringAlerts.report("9_0", Map.of(key, 3L));
    FiringAlerts.report("9_1", Map.of(key, 2L));
    assertThat(firing("firing-test-rule")).isEqualTo(5.0);
    FiringAlerts.report("9_0", Map.of(key, 1L)); // a sweep resolved two
    assertThat(firing("firing-test-rule")).isEqualTo(3.0);
    FiringAlerts.withdraw("9_1"); // its partition moved to another instance
    assertThat(firing("firing-test-rule")).isEqualTo(1.0);
    FiringAlerts.withdraw("9_0");
    assertThat(firing("firing-test-rule")).isNull();
  }
}
