package dev.knockwatch.notify.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Glob;
import dev.knockwatch.notify.Fixtures;
import dev.knockwatch.notify.config.Route;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class RoutingTest {

  private static Route route(Set<Alert.Severity> severities, List<String> rules, List<String> receivers, boolean cont) {
    return new Route(severities, rules.stream().map(Glob::of).toList(), Set.of(), List.of(), receivers, cont, List.of(),
        Route.DEFAULT_GROUP_WAIT, Duration.ofMinutes(5));
  }

  @Test
  void theFirstMatchingRouteWinsAndContinueGoesOn() {
    Route pages = route(Set.of(Alert.Severity.PAGE), List.of(), List.of("pagerduty", "slack"), true);
    Route offRole = route(Set.of(), List.of("off-*"), List.of("webhook"), false);
    Route rest = route(Set.of(), List.of(), List.of("console"), false);
    Routing routing = new Routing(List.of(pages, offRole, rest));
    assertThat(routing.targets(Fixtures.offRole())).containsExactly(new Routing.Target(pages, "pagerduty"),
        new Routing.Target(pages, "slack"), new Routing.Target(offRole, "webhook"));
    // a warning matches neither the page route nor the off-role glob's stop: the catch-all only
    assertThat(routing.targets(Fixtures.hostile())).containsExactly(new Routing.Target(rest, "console"));
  }

  @Test
  void noMatchingRouteIsNoReceiver() {
    Routing routing = new Routing(List.of(route(Set.of(Alert.Severity.WARNING), List.of(), List.of("slack"), false)));
    assertThat(routing.targets(Fixtures.offRole())).isEmpty();
  }
}
