package dev.knockwatch.streams.discover;

import dev.knockwatch.events.AddressClass;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.HostClassifier;
import dev.knockwatch.events.ProbeAgents;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.state.WriteBackStore;
import dev.knockwatch.streams.rules.Grain;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.PolicyView;
import dev.knockwatch.streams.timeline.CommandSummary;
import dev.knockwatch.streams.timeline.TimelineInput;
import dev.knockwatch.streams.timeline.TimelineProcessor;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;

/**
 * The timeline app's bounded aggregates, beside its per-command stores: per role and hour the
 * refused destinations ({@link RoleHour}: what {@code allowlist suggest} and the console's
 * Discover view read), and per hour the console's overview ({@link HourOverview}). Both are kept
 * as objects and written at each commit ({@link WriteBackStore}); readers (the query API) see
 * what the last commit wrote. An hour is the refusal's observed time, clamped to the last
 * {@code retention} and no later than five minutes ahead of this clock (the agent writes the
 * timestamp: a far past or future hour would be a bucket nobody sweeps). Buckets older than the
 * retention (at most {@link #MAX_RETENTION}) are removed every ten minutes. Knockwatch's own probes are left out. An alert counts
 * once, when its command's timeline does not hold it yet: this processor runs before the timeline's,
 * on the same records, and reads its commands store.
 */
public final class DiscoverProcessor implements Processor<String, TimelineInput, Void, Void> {

  public static final String ROLE_HOURS = "discover-role-hours";
  public static final String OVERVIEW = "discover-overview";
  static final long HOUR_MS = Duration.ofHours(1).toMillis();
  static final long AHEAD_MS = Duration.ofMinutes(5).toMillis();
  /**
   * How long the buckets are kept: a week and a day, whatever the timeline keeps (its commands, 30
   * days by default). At the bound, a role's hours of one partition hold at most 192 × 48 destinations.
   */
  public static final Duration MAX_RETENTION = Duration.ofDays(8);

  private final Policy policy;
  private final Duration retention;
  private ProcessorContext<Void, Void> context;
  private WriteBackStore<RoleHour> roleHours;
  private WriteBackStore<HourOverview> overview;
  private ReadOnlyKeyValueStore<String, CommandSummary> commands;
  private PolicyView view;

  public DiscoverProcessor(Policy policy, Duration retention) {
    this.policy = policy;
    this.retention = retention.compareTo(MAX_RETENTION) < 0 ? retention : MAX_RETENTION;
  }

  public static List<StoreBuilder<?>> stores() {
    return List.of(WriteBackStore.queryableBuilder(ROLE_HOURS, RoleHour.SERDE),
        WriteBackStore.queryableBuilder(OVERVIEW, HourOverview.SERDE));
  }

  /** The key of an hour's buckets: the hour since the epoch, zero-padded, so a range reads hours in order. */
  public static String hourKey(long hour) {
    return String.format("%010d", hour);
  }

  /** The key of a role's hour. */
  public static String roleHourKey(long hour, String role) {
    return hourKey(hour) + '\u0000' + role;
  }

  @Override
  public void init(ProcessorContext<Void, Void> context) {
    this.context = context;
    this.roleHours = context.getStateStore(ROLE_HOURS);
    this.overview = context.getStateStore(OVERVIEW);
    this.commands = context.getStateStore(TimelineProcessor.COMMANDS);
    this.view = PolicyView.of(policy, context);
    context.schedule(Duration.ofMinutes(10), PunctuationType.WALL_CLOCK_TIME, this::sweep);
  }

  @Override
  public void process(Record<String, TimelineInput> record) {
    TimelineInput in = record.value();
    if (record.key() == null || in == null) {
      return;
    }
    long now = context.currentSystemTimeMs();
    if (in.event() != null) {
      event(record.key(), in.event(), clamp(record.timestamp(), now));
    } else if (in.alert() != null) {
      // a new alert of its command: the timeline (which this processor runs before) has not seen it
      CommandSummary s = commands.get(record.key());
      if (s == null || s.alerts() == null || !s.alerts().containsKey(in.alert().fingerprint())) {
        alert(in.alert(), now);
      }
    }
  }

  private long clamp(long at, long now) {
    return at > now + AHEAD_MS || at < now - retention.toMillis() ? now : at;
  }

  private void event(String commandId, ViolationEvent e, long at) {
    if (ProbeAgents.is(e.agentId()) || e.sandboxOff() || e.unenforced()) {
      return;
    }
    long hour = Math.floorDiv(at, HOUR_MS);
    int minute = (int) (Math.floorMod(at, HOUR_MS) / 60_000);
    AddressClass cls = e.addressClass() != null ? e.addressClass()
        : e.host() == null ? null : HostClassifier.classify(e.host()).orElse(null);
    String kind = e.kind() == null ? "-" : e.kind().name().toLowerCase(Locale.ROOT).replace('_', '-');
    String agent = e.agentId() == null ? null : Sanitize.text(e.agentId(), Sanitize.MAX_WORD_CHARS);
    HourOverview o = overview.get(hourKey(hour));
    if (o == null) {
      o = new HourOverview(hour);
    }
    o.refused(minute, kind + "/" + (cls == null ? "-" : cls.wireName()), agent);
    overview.put(hourKey(hour), o);
    if (e.host() == null || e.host().isEmpty()) {
      return;
    }
    String role = roleOf(e.role(), e.agentId());
    String key = roleHourKey(hour, role);
    RoleHour r = roleHours.get(key);
    if (r == null) {
      r = new RoleHour(role, hour);
    }
    r.refused(Sanitize.text(e.host(), Sanitize.MAX_HOST_CHARS), e.port() == null ? -1 : e.port(), at, commandId,
        Grain.TASK.keyOf(commandId, e), agent, cls);
    roleHours.put(key, r);
  }

  /** The event's role when the policy names it, else the role its agent has. */
  private String roleOf(String named, String agentId) {
    Policy p = view.current();
    return named != null && p.roles().containsKey(named) ? named : view.roleOf(agentId);
  }

  private void alert(Alert a, long now) {
    if (a.status() != Alert.Status.FIRING || ProbeAgents.is(a.agentId()) || a.fingerprint() == null) {
      return;
    }
    long at = clamp(a.firstSeen() == null ? now : a.firstSeen().toEpochMilli(), now);
    long hour = Math.floorDiv(at, HOUR_MS);
    HourOverview o = overview.get(hourKey(hour));
    if (o == null) {
      o = new HourOverview(hour);
    }
    String rule = Sanitize.text(String.valueOf(a.rule()), Sanitize.MAX_WORD_CHARS);
    o.alerted(rule, a.severity() == null ? "none" : a.severity().name().toLowerCase(Locale.ROOT));
    overview.put(hourKey(hour), o);
    if (a.host() != null && !a.host().isEmpty()) {
      String key = roleHourKey(hour, roleOf(a.role(), a.agentId()));
      RoleHour r = roleHours.get(key);
      if (r == null) {
        r = new RoleHour(roleOf(a.role(), a.agentId()), hour);
      }
      r.alerted(Sanitize.text(a.host(), Sanitize.MAX_HOST_CHARS), a.port() == null ? -1 : a.port(), at, rule);
      roleHours.put(key, r);
    }
  }

  /** Removes the buckets of hours older than the retention. */
  void sweep(long nowMs) {
    String oldest = hourKey(Math.floorDiv(nowMs - retention.toMillis(), HOUR_MS));
    for (WriteBackStore<?> store : List.of(roleHours, overview)) {
      store.entries().removeIf((Map.Entry<String, ?> e) -> e.getKey().compareTo(oldest) < 0);
    }
  }
}
