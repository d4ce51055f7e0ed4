package dev.knockwatch.streams.count;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Sanitize;
import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * What the count detector remembers of one command in one window. {@code targets}: refusals per
 * host:port (or path), at most {@value #MAX_TARGETS} of them; the rest count under {@value #OTHER}.
 */
public record WindowCount(
    long count,
    Instant firstSeen,
    Instant lastSeen,
    String agentId,
    String lastTarget,
    List<String> sampleEventIds,
    Map<String, Long> targets) {

  public static final int MAX_TARGETS = 20;
  public static final int MAX_TARGET_CHARS = 256;
  public static final String OTHER = "(others)";
  private static final int TOP = 5;

  /**
   * Counts one refusal of {@code target} in a tally of at most {@value #MAX_TARGETS} names, each
   * cut to {@value #MAX_TARGET_CHARS} characters; the others count under {@value #OTHER}.
   * Returns the name as cut (whether it was tallied by name or under the others).
   */
  public static String tally(Map<String, Long> targets, String target) {
    String key = Sanitize.text(target, MAX_TARGET_CHARS);
    targets.merge(targets.containsKey(key) || targets.size() < MAX_TARGETS ? key : OTHER, 1L, Long::sum);
    return key;
  }

  /** The five most refused targets of a tally, most first (ties: the first refused first). */
  public static List<Alert.Target> top(Map<String, Long> targets) {
    if (targets == null || targets.isEmpty()) {
      return null;
    }
    // an insertion into the five kept, after any of equal count: called on every hit of an episode
    Alert.Target[] top = new Alert.Target[Math.min(TOP, targets.size())];
    int n = 0;
    for (Map.Entry<String, Long> e : targets.entrySet()) {
      long count = e.getValue();
      int at = n;
      while (at > 0 && top[at - 1].count() < count) {
        at--;
      }
      if (at == top.length) {
        continue;
      }
      System.arraycopy(top, at, top, at + 1, Math.min(n, top.length - 1) - at);
      top[at] = new Alert.Target(e.getKey(), count);
      n = Math.min(n + 1, top.length);
    }
    return List.of(top);
  }
}
