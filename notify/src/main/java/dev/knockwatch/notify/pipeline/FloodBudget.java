package dev.knockwatch.notify.pipeline;

import dev.knockwatch.events.Alert;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * How many notifications one command, and one rule, may send one receiver a minute: past
 * {@value #PER_COMMAND} for a command, or {@value #PER_RULE} for a rule, the next ones of that
 * command (or rule) are folded into one digest a minute, so no agent's flood fills the queue that
 * another command's page waits in (docs/RELIABILITY.md). Bounded: at most the cap's send times per
 * key, keys dropped once their minute has passed.
 */
public final class FloodBudget {

  public static final int PER_COMMAND = 20;
  public static final int PER_RULE = 100;
  public static final Duration PER = Duration.ofMinutes(1);

  /** receiver NUL "c"|"r" NUL command or rule -> when the last sends of the minute were let through */
  private final Map<String, ArrayDeque<Long>> sent = new HashMap<>();
  private long lastPruneNanos;

  /**
   * Null when the notification may go on its own now (and it is counted); else the group field
   * ({@code command} or {@code rule}) to fold it by.
   */
  public String fold(String receiver, Alert a, long nowNanos) {
    prune(nowNanos);
    ArrayDeque<Long> byCommand = window(receiver + "\u0000c\u0000" + a.commandId(), nowNanos);
    if (byCommand.size() >= PER_COMMAND) {
      return "command";
    }
    ArrayDeque<Long> byRule = window(receiver + "\u0000r\u0000" + a.rule(), nowNanos);
    if (byRule.size() >= PER_RULE) {
      return "rule";
    }
    byCommand.addLast(nowNanos);
    byRule.addLast(nowNanos);
    return null;
  }

  private ArrayDeque<Long> window(String key, long nowNanos) {
    ArrayDeque<Long> times = sent.computeIfAbsent(key, k -> new ArrayDeque<>());
    while (!times.isEmpty() && nowNanos - times.peekFirst() >= PER.toNanos()) {
      times.pollFirst();
    }
    return times;
  }

  private void prune(long nowNanos) {
    if (nowNanos - lastPruneNanos < PER.toNanos()) {
      return;
    }
    lastPruneNanos = nowNanos;
    for (Iterator<ArrayDeque<Long>> it = sent.values().iterator(); it.hasNext(); ) {
      ArrayDeque<Long> times = it.next();
      if (times.isEmpty() || nowNanos - times.peekLast() >= PER.toNanos()) {
        it.remove();
      }
    }
  }

  int keys() {
    return sent.size();
  }
}
