package dev.knockwatch.streams.timeline;

import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.PolicyView;
import dev.knockwatch.streams.state.PunctuatedWork;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.processor.Cancellable;
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
 * the summary counts all of them. It keeps the lists' {@link TimelineIndex} as each command
 * changes; a store from before the index is indexed in batches of {@value #BUILD_BATCH} commands
 * by a wall-clock punctuation (each batch within one transaction's time). Commands idle longer than
 * the retention are removed by another, which finds them in the index, oldest first.
 */
public final class TimelineProcessor implements Processor<String, TimelineInput, Void, Void> {

  public static final String COMMANDS = "timeline-commands";
  public static final String EVENTS = "timeline-events";
  public static final int KEEP = 1000;
  static final Duration SWEEP_EVERY = Duration.ofMinutes(10);
  static final int BUILD_BATCH = 5_000;

  private final Policy policy;
  private final Duration retention;
  private ProcessorContext<Void, Void> context;
  private KeyValueStore<String, CommandSummary> commands;
  private KeyValueStore<String, ViolationEvent> events;
  private KeyValueStore<String, String> index;
  private PolicyView view;
  private Cancellable building;
  private String builtUpTo;

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
    this.index = context.getStateStore(TimelineIndex.STORE);
    this.view = PolicyView.of(policy, context);
    context.schedule(SWEEP_EVERY, PunctuationType.WALL_CLOCK_TIME, this::expire);
    if (index.get(TimelineIndex.BUILT) == null) {
      building = context.schedule(Duration.ofMillis(100), PunctuationType.WALL_CLOCK_TIME, this::buildIndex);
      PunctuatedWork.begin();
    }
  }

  @Override
  public void close() {
    if (building != null) {
      building.cancel();
      building = null;
      PunctuatedWork.done();
    }
  }

  /**
   * Indexes the next batch of commands, in key order from where the last batch stopped; marks the
   * index built after the last. A command changed meanwhile was indexed by {@link #process}: a
   * batch writes the same entries again. After a restart the build begins again from the first.
   */
  void buildIndex(long nowMs) {
    int n = 0;
    String last = null;
    try (KeyValueIterator<String, CommandSummary> it = commands.range(builtUpTo, null)) {
      while (it.hasNext() && n < BUILD_BATCH) {
        KeyValue<String, CommandSummary> kv = it.next();
        if (kv.key.equals(builtUpTo)) {
          continue;
        }
        TimelineIndex.update(index, null, kv.value);
        last = kv.key;
        n++;
      }
    }
    if (n < BUILD_BATCH) {
      index.put(TimelineIndex.BUILT, Instant.ofEpochMilli(nowMs).toString());
      building.cancel();
      building = null;
      PunctuatedWork.done();
    } else {
      builtUpTo = last;
    }
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
    TimelineIndex.update(index, before, s);
  }

  /**
   * Removes the commands last active before the retention, with their events and index entries:
   * the oldest end of the index's recent-commands range, so a sweep reads only what goes.
   */
  void expire(long nowMs) {
    Instant cutoff = Instant.ofEpochMilli(nowMs).minus(retention);
    String[] old = TimelineIndex.range(TimelineIndex.commandsPrefix(), null, cutoff.minusMillis(1));
    List<String> gone = new ArrayList<>();
    try (KeyValueIterator<String, String> it = index.range(old[0], old[1])) {
      it.forEachRemaining(kv -> gone.add(TimelineIndex.commandOf(kv.key)));
    }
    for (String commandId : gone) {
      String[] range = eventRange(commandId);
      List<String> keys = new ArrayList<>();
      try (KeyValueIterator<String, ViolationEvent> it = events.range(range[0], range[1])) {
        it.forEachRemaining(kv -> keys.add(kv.key));
      }
      keys.forEach(events::delete);
      TimelineIndex.update(index, commands.delete(commandId), null);
    }
  }

}
