package dev.knockwatch.notify.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.Alert;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A receiver's minute: a command's share, a rule's share, and the receiver's own cap. */
class FloodBudgetTest {

  private static final long MINUTE = Duration.ofMinutes(1).toNanos();

  private static Alert alert(String command, String rule) {
    return Alert.firing(rule, command).fingerprint(command + rule).agentId("a").role("ci").firstSeen(Instant.EPOCH)
        .lastSeen(Instant.EPOCH).summary("s").sampleEventIds(List.of()).sources(List.of()).policyVersion("v")
        .build();
  }

  private static List<String> folds(FloodBudget budget, String receiver, int n, String command, long now) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(String.valueOf(budget.fold(receiver, alert(command == null ? "Command" + i : command, "rule" + i % 3), now)));
    }
    return out;
  }

  @Test
  void pastItsMaxPerMinuteEveryNextNotificationOfTheReceiverIsFoldedUntilTheMinuteIsOver() {
    FloodBudget budget = new FloodBudget(Map.of("slack", 5, "console", 0)::get);
    List<String> slack = folds(budget, "slack", 8, null, 0);
    assertThat(slack).containsExactly("null", "null", "null", "null", "null", "receiver", "receiver", "receiver");
    assertThat(folds(budget, "console", 200, null, 0)).as("no cap").containsOnly("null");
    assertThat(folds(budget, "slack", 1, null, MINUTE - 1)).containsExactly("receiver");
    assertThat(folds(budget, "slack", 5, null, MINUTE)).as("a new minute").containsOnly("null");
  }

  @Test
  void aCommandsShareIsSpentBeforeTheReceiversCap() {
    FloodBudget budget = new FloodBudget(r -> 1_000);
    List<String> one = folds(budget, "slack", FloodBudget.PER_COMMAND + 2, "CommandOne", 0);
    assertThat(one.subList(0, FloodBudget.PER_COMMAND)).containsOnly("null");
    assertThat(one.subList(FloodBudget.PER_COMMAND, one.size())).containsOnly("command");
    assertThat(folds(budget, "slack", 1, "CommandTwo", 0)).as("another command's own share").containsExactly("null");
  }
}
