package dev.knockwatch.notify.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.Alert;
import dev.knockwatch.notify.Fixtures;
import dev.knockwatch.notify.spi.Notification;
import dev.knockwatch.notify.config.Route;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class GrouperTest {

  private static final Route BY_RULE = new Route(List.of(), List.of("slack"), false, List.of("rule"),
      Duration.ofSeconds(30), Duration.ofMinutes(2), Duration.ofMinutes(5), List.of());
  private static final long WAIT = Duration.ofSeconds(30).toNanos();

  private static Alert command(String commandId, String rule) {
    Alert a = Fixtures.offRole();
    return Alert.firing(rule, commandId).fingerprint(commandId + rule).severity(a.severity()).status(a.status())
        .agentId(a.agentId()).role(a.role()).host(a.host()).port(a.port()).count(a.count())
        .windowStart(a.windowStart()).windowEnd(a.windowEnd()).firstSeen(a.firstSeen()).lastSeen(a.lastSeen())
        .summary(a.summary()).sampleEventIds(a.sampleEventIds()).sources(a.sources())
        .policyVersion(a.policyVersion()).build();
  }

  @Test
  void alertsWithOneGroupKeyLeaveTogetherOnceTheWaitIsOver() {
    Grouper g = new Grouper();
    for (int i = 0; i < 1_000; i++) {
      g.add("slack", BY_RULE, Notification.Event.FIRING, command("Cmd" + i, "off-role-host"), new Pending(i), 0);
    }
    g.add("slack", BY_RULE, Notification.Event.FIRING, command("Other", "bypass"), new Pending(1_000), 10);
    assertThat(g.due(WAIT - 1, false)).as("nothing before its groupWait").isEmpty();
    List<Grouper.Due> due = g.due(WAIT, false);
    assertThat(due).singleElement().satisfies(d -> {
      assertThat(d.notification().alerts()).hasSize(1_000).allSatisfy(a -> assertThat(a.rule()).isEqualTo("off-role-host"));
      assertThat(d.pendings()).hasSize(1_000);
      assertThat(d.notification().key()).startsWith("group-");
      assertThat(d.notification().receiver()).isEqualTo("slack");
    });
    assertThat(g.isEmpty()).isFalse();
    assertThat(g.due(WAIT + 10, false)).singleElement()
        .satisfies(d -> assertThat(d.notification().key()).as("a group of one keeps its alert's key").isEqualTo("Otherbypass"));
    assertThat(g.isEmpty()).isTrue();
  }

  @Test
  void receiversAndEventsAreGroupedApartAndFlushingTakesAll() {
    Grouper g = new Grouper();
    g.add("slack", BY_RULE, Notification.Event.FIRING, command("A", "r"), new Pending(0), 0);
    g.add("pager", BY_RULE, Notification.Event.FIRING, command("B", "r"), new Pending(1), 0);
    g.add("slack", BY_RULE, Notification.Event.RESOLVED, command("C", "r"), new Pending(2), 0);
    g.add("slack", BY_RULE, Notification.Event.FIRING, command("D", "r"), new Pending(3), 0);
    List<Grouper.Due> all = g.due(0, true);
    assertThat(all).extracting(d -> d.notification().receiver() + "/" + d.notification().event() + "/"
        + d.notification().alerts().size()).containsExactly("slack/FIRING/2", "pager/FIRING/1", "slack/RESOLVED/1");
    assertThat(g.isEmpty()).isTrue();
  }

  @Test
  void aGroupThatSentWaitsItsGroupIntervalNotItsGroupWait() {
    long interval = Duration.ofMinutes(2).toNanos();
    Grouper g = new Grouper();
    g.add("slack", BY_RULE, Notification.Event.FIRING, command("A", "r"), new Pending(0), 0);
    assertThat(g.due(WAIT, false)).hasSize(1);
    // B joins the group that just sent: it leaves groupInterval after that send, not groupWait after it came
    g.add("slack", BY_RULE, Notification.Event.FIRING, command("B", "r"), new Pending(1), WAIT + 1);
    g.add("slack", BY_RULE, Notification.Event.FIRING, command("C", "r"), new Pending(2), WAIT + 2);
    assertThat(g.due(2 * WAIT + 2, false)).as("groupWait after B is not enough").isEmpty();
    assertThat(g.due(WAIT + interval - 1, false)).isEmpty();
    assertThat(g.due(WAIT + interval, false)).singleElement()
        .satisfies(d -> assertThat(d.notification().alerts()).extracting(Alert::commandId).containsExactly("B", "C"));
    // a group that has not sent for longer than its interval is new again: groupWait
    long later = WAIT + 2 * interval + 1;
    g.add("slack", BY_RULE, Notification.Event.FIRING, command("D", "r"), new Pending(3), later);
    assertThat(g.due(later + WAIT - 1, false)).isEmpty();
    assertThat(g.due(later + WAIT, false)).hasSize(1);
    // another group key has no interval to wait out
    g.add("slack", BY_RULE, Notification.Event.FIRING, command("E", "other"), new Pending(4), later + WAIT);
    assertThat(g.due(later + 2 * WAIT, false)).hasSize(1);
  }

  @Test
  void anAlertReadTwiceIsInItsDigestOnceAndBothReadsAreDone() {
    Grouper g = new Grouper();
    g.add("slack", BY_RULE, Notification.Event.FIRING, command("A", "r"), new Pending(0), 0);
    g.add("slack", BY_RULE, Notification.Event.FIRING, command("B", "r"), new Pending(1), 0);
    g.add("slack", BY_RULE, Notification.Event.FIRING, command("A", "r"), new Pending(2), 1); // read again after a rebalance
    assertThat(g.due(WAIT + 1, false)).singleElement().satisfies(d -> {
      assertThat(d.notification().alerts()).extracting(Alert::commandId).containsExactly("A", "B");
      assertThat(d.pendings()).hasSize(3);
    });
  }
}
