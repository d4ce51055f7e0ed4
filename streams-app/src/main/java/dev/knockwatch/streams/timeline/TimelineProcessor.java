package dev.knockwatch.streams.timeline;

import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.PolicyView;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Keeps each command's timeline: its {@link CommandSummary} in {@value #COMMANDS}, and its events
 * in {@value #EVENTS} under {@code commandId + NUL + sequence} (zero-padded, so a prefix range
 * reads them in order). Only the first and the last {@value #KEEP} events of a command are kept;
 * the summary counts all of them. Commands idle longer than the retention are removed by a
 * wall-clock punctuation.
 */
public final class TimelineProcessor implements Processor<String, TimelineInput, Void, Void> {

  public static final String COMMANDS = "timeline-commands";
  public static final String EVENTS = "timeline-events";
  public static final int KEEP = 1000;
  static final Duration SWEEP_EVERY = Duration.ofMinutes(10);

  private final Policy policy;
  private final Duration retention;
  private ProcessorContext<Void, Void> context;
  private KeyValueStore<String, CommandSummary> commands;
  private KeyValueStore<String, ViolationEvent> events;
  private PolicyView view;

  public TimelineProcessor(Policy policy, Duration retention) {
    this.policy = policy;
    this.retention = retention;
  }

  /** The key of a command's {@code seq}-th event. */
  public static String eventKey(String commandId, long seq) {
    return commandId + '\u0000' + String.format("%012d", seq);
  }

  /** The key range of a command's events: [from, to). */
  public static String[] eventRange(String commandId) {
    return new String[] {commandId + '\u0000', commandId + '\u0001'};
  }

  @Override
  public void init(ProcessorContext<Void, Void> context) {
    this.context = context;
    this.commands = context.getStateStore(COMMANDS);
    this.events = context.getStateStore(EVENTS);
    this.view = PolicyView.of(policy, context);
    context.schedule(SWEEP_EVERY, PunctuationType.WALL_CLOCK_TIME, this::expire);
  }

  @Override
  public void process(Record<String, TimelineInput> record) {
    String commandId = record.key();
    TimelineInput in = record.value();
    if (commandId == null || in == null) {
      return;
    }
    CommandSummary before = commands.get(commandId);
    CommandSummary s = before == null ? CommandSummary.empty(commandId) : before;
    if (in.event() != null) {
      ViolationEvent e = in.event();
      long seq = s.events();
      events.put(eventKey(commandId, seq), e);
      if (seq >= 2L * KEEP) {
        events.delete(eventKey(commandId, seq - KEEP)); // leaves the first KEEP and the last KEEP
      }
      String role = e.role() != null ? e.role() : view.roleOf(e.agentId());
      s = s.with(e, role, Instant.ofEpochMilli(record.timestamp()));
    } else if (in.alert() != null) {
      s = s.with(in.alert());
    }
    commands.put(commandId, s);
  }

  /** Removes the commands whose last event is older than the retention, with their events. */
  void expire(long nowMs) {
    Instant cutoff = Instant.ofEpochMilli(nowMs).minus(retention);
    List<String> old = new ArrayList<>();
    try (KeyValueIterator<String, CommandSummary> it = commands.all()) {
      while (it.hasNext()) {
        KeyValue<String, CommandSummary> kv = it.next();
        Instant last = kv.value.lastSeen() != null ? kv.value.lastSeen() : lastAlert(kv.value);
        if (last != null && last.isBefore(cutoff)) {
          old.add(kv.key);
        }
      }
    }
    for (String commandId : old) {
      String[] range = eventRange(commandId);
      List<String> keys = new ArrayList<>();
      try (KeyValueIterator<String, ViolationEvent> it = events.range(range[0], range[1])) {
        it.forEachRemaining(kv -> keys.add(kv.key));
      }
      keys.forEach(events::delete);
      commands.delete(commandId);
    }
  }

  private static Instant lastAlert(CommandSummary s) {
    return s.alerts().values().stream().map(CommandSummary.AlertBrief::lastSeen).filter(java.util.Objects::nonNull)
        .max(Instant::compareTo).orElse(null);
  }

}
