package dev.knockwatch.notify.pipeline;

import dev.knockwatch.events.Alert;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.function.ToIntFunction;

/**
 * How many notifications one command, one rule, and all of them may send one receiver a minute:
 * past {@value #PER_COMMAND} for a command, or {@value #PER_RULE} for a rule, the next ones of that
 * command (or rule) are folded into one digest a minute, so no agent's flood fills the queue that
 * another command's page waits in (docs/RELIABILITY.md); past the receiver's own cap
 * ({@code maxPerMinute}), every next one is folded into one digest of the receiver a minute. Bounded: at most the cap's send times per
 * key, keys dropped once their minute has passed.
 */
public final class FloodBudget {

  public static final int PER_COMMAND = 20;
  public static final int PER_RULE = 100;
  public static final Duration PER = Duration.ofMinutes(1);

  /** receiver NUL "c"|"r" NUL command or rule -> when the last sends of the minute were let through */
  private final Map<String, ArrayDeque<Long>> sent = new HashMap<>();
  private long lastPruneNanos;
  private final ToIntFunction<String> maxPerMinute;

  /** @param maxPerMinute a receiver's cap on notifications a minute; 0 for none */
  public FloodBudget(ToIntFunction<String> maxPerMinute) {
    this.maxPerMinute = maxPerMinute;
  }

  /**
   * Null when the notification may go on its own now (and it is counted); else the group field
   * ({@code command} or {@code rule}) to fold it by, or {@code receiver} to fold it with all the
   * receiver's others.
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
    int cap = maxPerMinute.applyAsInt(receiver);
    ArrayDeque<Long> all = window(receiver + "\u0000a", nowNanos);
    if (cap > 0 && all.size() >= cap) {
      return "receiver";
    }
    byCommand.addLast(nowNanos);
    byRule.addLast(nowNanos);
    all.addLast(nowNanos);
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
