package dev.knockwatch.notify.pipeline;

import dev.knockwatch.events.Alert;
import dev.knockwatch.notify.Notification;
import dev.knockwatch.notify.config.Route;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The group stage: alerts of a route with {@code groupBy} wait up to {@code groupWait} for others
 * with the same group key, receiver and event, and leave together as one digest. 10,000
 * commands firing one rule at once make one message per group, not 10,000.
 */
public final class Grouper {

  /** A group ready to send: its notification and the records it stands for. */
  public record Due(Notification notification, List<Pending> pendings) {}

  private static final class Group {
    final String receiver;
    final Notification.Event event;
    final long dueAtNanos;
    final List<Alert> alerts = new ArrayList<>();
    final List<Pending> pendings = new ArrayList<>();

    Group(String receiver, Notification.Event event, long dueAtNanos) {
      this.receiver = receiver;
      this.event = event;
      this.dueAtNanos = dueAtNanos;
    }
  }

  private final Map<String, Group> groups = new LinkedHashMap<>();

  public void add(String receiver, Route route, Notification.Event event, Alert alert, Pending pending, long nowNanos) {
    String id = receiver + "\u0000" + event + "\u0000" + route.groupKey(alert);
    Group g = groups.computeIfAbsent(id, k -> new Group(receiver, event, nowNanos + route.groupWait().toNanos()));
    g.alerts.add(alert);
    g.pendings.add(pending);
  }

  /** The groups whose wait is over (all of them when {@code all}), removed. */
  public List<Due> due(long nowNanos, boolean all) {
    List<Due> out = new ArrayList<>();
    for (Iterator<Group> it = groups.values().iterator(); it.hasNext(); ) {
      Group g = it.next();
      if (all || nowNanos - g.dueAtNanos >= 0) {
        it.remove();
        String key = g.alerts.size() == 1 ? g.alerts.get(0).fingerprint()
            : "group-" + dev.knockwatch.events.Hashes.sha256Hex(g.receiver + "\u0000" + g.event + "\u0000"
                + g.alerts.get(0).fingerprint() + "\u0000" + g.alerts.size(), 8);
        out.add(new Due(new Notification(g.receiver, g.event, key, List.copyOf(g.alerts), null), List.copyOf(g.pendings)));
      }
    }
    return out;
  }

  public boolean isEmpty() {
    return groups.isEmpty();
  }

}
