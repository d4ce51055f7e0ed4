package dev.knockwatch.notify.pipeline;

import dev.knockwatch.events.Alert;
import dev.knockwatch.notify.config.Route;
import java.util.ArrayList;
import java.util.List;

/**
 * route: the receivers an alert goes to, each with the node of the route tree that named it.
 * Depth first, as Alertmanager: the root takes every alert; a node's children are tried in order,
 * the first that matches wins, and the next ones too while a matching child says {@code continue};
 * a node none of whose children match sends to its own receivers.
 */
public final class Routing {

  /**
   * One receiver of an alert, and the node (its throttle and grouping) it goes by; {@code path} is
   * where that node is: {@code root}, or the 1-based index of each child on the way, {@code 2.1}.
   */
  public record Target(Route route, String receiver, String path) {}

  private final Route root;

  public Routing(Route root) {
    this.root = root;
  }

  public List<Target> targets(Alert alert) {
    List<Target> out = new ArrayList<>();
    match(root, "", alert, out);
    return out;
  }

  /** Whether {@code node} took the alert; its targets (or its matching descendants') added to {@code out}. */
  private static boolean match(Route node, String path, Alert alert, List<Target> out) {
    if (!node.matches(alert)) {
      return false;
    }
    boolean child = false;
    for (int i = 0; i < node.routes().size(); i++) {
      Route r = node.routes().get(i);
      if (match(r, path.isEmpty() ? String.valueOf(i + 1) : path + "." + (i + 1), alert, out)) {
        child = true;
        if (!r.continueMatching()) {
          break;
        }
      }
    }
    if (!child) {
      String where = path.isEmpty() ? "root" : path;
      node.receivers().forEach(receiver -> out.add(new Target(node, receiver, where)));
    }
    return true;
  }
}
