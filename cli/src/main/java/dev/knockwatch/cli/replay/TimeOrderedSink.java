package dev.knockwatch.cli.replay;

import dev.knockwatch.events.RejectedLine;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.EventSink;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * Holds the events until {@link #drain}, then publishes them in event-time order, so that a
 * later file's earlier refusals are not dropped as late. An event whose line had no time of its
 * own (ingest gave it its file's modification time) takes the time of the nearest timed refusal
 * of its command: the last one before it in its file, else the command's first; at that time it
 * sorts after the timed ones, never before the evidence it came with. Rejected lines pass
 * straight through.
 */
public final class TimeOrderedSink implements EventSink {
  private final EventSink next;
  private final List<ViolationEvent> held = new ArrayList<>();

  public TimeOrderedSink(EventSink next) {
    this.next = next;
  }

  @Override
  public void publish(ViolationEvent event) {
    held.add(event);
  }

  @Override
  public void reject(RejectedLine rejected) {
    next.reject(rejected);
  }

  @Override
  public void flush() {
    // events are held until drain(); rejected lines are flushed with them
  }

  /** Publishes what it holds in time order; returns the latest event time (epoch ms), 0 when none. */
  public long drain() throws EventSink.PublishException {
    retime(held);
    // at one time, a line that took its time from its command's timed refusals follows them: the
    // evidence it came with happened first (a --noproxy retry in stderr after the refusal it follows)
    held.sort(Comparator.comparing(ViolationEvent::observedAt)
        .thenComparing(e -> ViolationEvent.TIME_FROM_COMMAND.equals(e.timeSource()))
        .thenComparing(e -> e.origin().file()).thenComparingLong(e -> e.origin().offset()));
    held.forEach(next::publish);
    long latest = held.isEmpty() ? 0 : held.get(held.size() - 1).observedAt().toEpochMilli();
    held.clear();
    next.flush();
    return latest;
  }

  @Override
  public void close() {
    // the next sink is closed by its owner
  }

  /**
   * A rejected refusal's notice (its own time unknown) takes the time of the last timed event
   * before it in its file, else the file's first, else the input's earliest: whatever the files'
   * modification times, replay says the same.
   */
  private static ViolationEvent notice(ViolationEvent n, List<ViolationEvent> events) {
    ViolationEvent before = null;
    ViolationEvent firstInFile = null;
    ViolationEvent earliest = null;
    for (ViolationEvent t : events) {
      if (t.timeSource() != null) {
        continue;
      }
      if (earliest == null || t.observedAt().isBefore(earliest.observedAt())) {
        earliest = t;
      }
      if (t.origin().file().equals(n.origin().file())) {
        if (firstInFile == null || t.origin().offset() < firstInFile.origin().offset()) {
          firstInFile = t;
        }
        if (t.origin().offset() < n.origin().offset() && (before == null || t.origin().offset() > before.origin().offset())) {
          before = t;
        }
      }
    }
    ViolationEvent nearest = before != null ? before : firstInFile != null ? firstInFile : earliest;
    return nearest == null ? n
        : n.toBuilder().observedAt(nearest.observedAt()).timeSource(ViolationEvent.TIME_FROM_COMMAND).build();
  }

  static void retime(List<ViolationEvent> events) {
    Map<String, List<ViolationEvent>> timed = new java.util.HashMap<>();
    for (ViolationEvent e : events) {
      if (e.timeSource() == null) {
        timed.computeIfAbsent(e.key(), c -> new ArrayList<>()).add(e);
      }
    }
    timed.values().forEach(l -> l.sort(Comparator.comparing(ViolationEvent::observedAt)));
    for (int i = 0; i < events.size(); i++) {
      ViolationEvent e = events.get(i);
      if (e.unattributed() != null && ViolationEvent.TIME_FROM_FILE.equals(e.timeSource())) {
        events.set(i, notice(e, events));
        continue;
      }
      List<ViolationEvent> ofCommand = timed.get(e.key());
      if (!ViolationEvent.TIME_FROM_FILE.equals(e.timeSource()) || ofCommand == null) {
        continue;
      }
      ViolationEvent before = null;
      for (ViolationEvent t : ofCommand) {
        if (t.origin().file().equals(e.origin().file()) && t.origin().offset() < e.origin().offset()
            && (before == null || t.origin().offset() > before.origin().offset())) {
          before = t;
        }
      }
      ViolationEvent nearest = before != null ? before : ofCommand.get(0);
      events.set(i, e.toBuilder().observedAt(nearest.observedAt()).timeSource(ViolationEvent.TIME_FROM_COMMAND).build());
    }
  }
}
