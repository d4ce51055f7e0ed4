package dev.knockwatch.notify.pipeline;

import dev.knockwatch.events.Alert;
import dev.knockwatch.notify.config.Route;
import java.util.ArrayList;
import java.util.List;

/**
 * route: the receivers an alert goes to, each with the route that named it. Routes are tried in
 * the order of receivers.yaml; the first that matches wins, and the next ones too while a matching
 * route says {@code continue: true}.
 */
public final class Routing {

  /** One receiver of an alert, and the route (its throttle and grouping) it goes by. */
  public record Target(Route route, String receiver) {}

  private final List<Route> routes;

  public Routing(List<Route> routes) {
    this.routes = List.copyOf(routes);
  }

  public List<Target> targets(Alert alert) {
    List<Target> out = new ArrayList<>();
    for (Route r : routes) {
      if (r.matches(alert)) {
        r.receivers().forEach(receiver -> out.add(new Target(r, receiver)));
        if (!r.continueMatching()) {
          break;
        }
      }
    }
    return out;
  }
}
