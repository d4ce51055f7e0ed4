package dev.knockwatch.notify.pipeline;

import dev.knockwatch.events.Alert;
import dev.knockwatch.notify.spi.Notification;
import dev.knockwatch.notify.config.Route;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The group stage: alerts of a route with {@code groupBy} wait up to {@code groupWait} for others
 * with the same group key, receiver and event, and leave together as one digest. 10,000
 * commands firing one rule at once make one message per group, not 10,000. As Alertmanager's
 * {@code group_interval}: once a group has sent, the alerts that join it wait until
 * {@code groupInterval} after that send, and leave together then.
 */
public final class Grouper {

  /** A group ready to send: its notification and the records it stands for. */
  public record Due(Notification notification, List<Pending> pendings) {}

  private static final class Group {
    final String receiver;
    final Notification.Event event;
    final long dueAtNanos;
    final long intervalNanos;
    /** By fingerprint: an alert read twice (again after a rebalance) is in its digest once, as last read. */
    final Map<String, Alert> alerts = new LinkedHashMap<>();
    final List<Pending> pendings = new ArrayList<>();

    Group(String receiver, Notification.Event event, long dueAtNanos, long intervalNanos) {
      this.receiver = receiver;
      this.event = event;
      this.dueAtNanos = dueAtNanos;
      this.intervalNanos = intervalNanos;
    }
  }

  private final Map<String, Group> groups = new LinkedHashMap<>();
  /** Group id -> when a group that sent may send again; dropped once that time has passed. */
  private final Map<String, Long> nextSend = new HashMap<>();

  public void add(String receiver, Route route, Notification.Event event, Alert alert, Pending pending, long nowNanos) {
    String id = receiver + "\u0000" + event + "\u0000" + route.groupKey(alert);
    Group g = groups.computeIfAbsent(id, k -> {
      Long next = nextSend.get(id);
      long due = next != null && next - nowNanos > 0 ? next : nowNanos + route.groupWait().toNanos();
      return new Group(receiver, event, due, route.groupInterval().toNanos());
    });
    g.alerts.put(alert.fingerprint() != null ? alert.fingerprint() : "#" + g.alerts.size(), alert);
    g.pendings.add(pending);
  }

  /** The groups whose wait is over (all of them when {@code all}), removed. */
  public List<Due> due(long nowNanos, boolean all) {
    List<Due> out = new ArrayList<>();
    nextSend.values().removeIf(next -> next - nowNanos <= 0);
    for (Iterator<Map.Entry<String, Group>> it = groups.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<String, Group> e = it.next();
      Group g = e.getValue();
      if (all || nowNanos - g.dueAtNanos >= 0) {
        it.remove();
        nextSend.put(e.getKey(), nowNanos + g.intervalNanos);
        List<Alert> alerts = List.copyOf(g.alerts.values());
        String key = alerts.size() == 1 ? alerts.get(0).fingerprint()
            : "group-" + dev.knockwatch.events.Hashes.sha256Hex(g.receiver + "\u0000" + g.event + "\u0000"
                + alerts.get(0).fingerprint() + "\u0000" + alerts.size(), 8);
        out.add(new Due(new Notification(g.receiver, g.event, key, alerts, null), List.copyOf(g.pendings)));
      }
    }
    return out;
  }

  public boolean isEmpty() {
    return groups.isEmpty();
  }

}
