package dev.knockwatch.streams.discover;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.AddressClass;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The hour's bound: a flood of one-off hosts churns only one-off hosts; what many commands needed stays. */
class RoleHourTest {

  static final long T = Instant.parse("2026-12-01T10:00:00Z").toEpochMilli();

  @Test
  void aMillionDistinctHostsOfOneAgentNeverGrowTheHourPastItsBound() {
    RoleHour hour = new RoleHour("ci", T / DiscoverProcessor.HOUR_MS);
    HourOverview overview = new HourOverview(T / DiscoverProcessor.HOUR_MS);
    // what the other agents needed, before the flood: five commands each
    for (int c = 0; c < 5; c++) {
      hour.refused("objects.githubusercontent.com", 443, T + c, "NeededCommand00000000" + c, "task-" + c, "ci-runner-2",
          AddressClass.PUBLIC);
      overview.refused(0, "network/public", "ci-runner-2");
    }
    int maxSize = 0;
    for (int i = 0; i < 1_000_000; i++) {
      hour.refused("h" + i + ".flood.example", 443, T + i, "FloodCommand0000000001", "FloodCommand0000000001",
          "hostile-agent", null);
      overview.refused(i % 60, "network/-", "hostile-agent");
      maxSize = Math.max(maxSize, hour.size());
    }
    // and after it: one more command needs it
    hour.refused("objects.githubusercontent.com", 443, T + 2_000_000, "NeededCommand000000009", "task-9", "ci-runner-3",
        AddressClass.PUBLIC);
    assertThat(maxSize).isLessThanOrEqualTo(RoleHour.MAX_HOSTS);
    HostTally needed = hour.hosts.stream().filter(t -> t.target().equals("objects.githubusercontent.com:443")).findFirst()
        .orElseThrow();
    assertThat(needed.commands.estimate()).isEqualTo(6);
    assertThat(needed.agents.estimate()).isEqualTo(2);
    assertThat(needed.refusals).isEqualTo(6);
    long kept = hour.hosts.stream().mapToLong(t -> t.refusals).sum();
    assertThat(kept + hour.dropped).as("every refusal is kept or counted as dropped").isEqualTo(1_000_006);
    byte[] bytes = RoleHour.SERDE.serializer().serialize("", hour);
    assertThat(bytes.length).isLessThan(RoleHour.MAX_HOSTS * 600);
    RoleHour back = RoleHour.SERDE.deserializer().deserialize("", bytes);
    assertThat(back.hosts).hasSize(hour.size());
    assertThat(back.dropped).isEqualTo(hour.dropped);
    assertThat(overview.agents).containsEntry("ci-runner-2", 5L).containsEntry("hostile-agent", 1_000_000L);
  }

  @Test
  void aFullHourOfNeededHostsTurnsNewcomersAwayAndAnAlertAlwaysGetsAPlace() {
    RoleHour hour = new RoleHour("ci", 1);
    for (int h = 0; h < RoleHour.MAX_HOSTS; h++) {
      for (int c = 0; c < 2; c++) {
        hour.refused("needed" + h + ".example", 443, T, "Cmd" + h + "-" + c, "t", "ci-1", null);
      }
    }
    assertThat(hour.refused("late.example", 443, T, "LateCommand", "t", "ci-1", null)).isFalse();
    assertThat(hour.dropped).isEqualTo(1);
    hour.alerted("bypassed.example", 443, T, "bypass");
    assertThat(hour.size()).isEqualTo(RoleHour.MAX_HOSTS);
    assertThat(hour.hosts).extracting(HostTally::target).contains("bypassed.example:443");
    assertThat(hour.dropped).isEqualTo(3); // the one turned away, and the two refusals of the host that made room
  }

  @Test
  void agentNamesAndRulesAreBounded() {
    RoleHour hour = new RoleHour("ci", 1);
    for (int a = 0; a < 100; a++) {
      hour.refused("x.example", 443, T, "C" + a, "t" + a, "agent-" + a, null);
      hour.alerted("x.example", 443, T, "rule-" + a);
    }
    HostTally t = hour.hosts.get(0);
    assertThat(t.agentNames).hasSize(HostTally.MAX_NAMES);
    assertThat(t.alertRules).hasSize(HostTally.MAX_NAMES);
    assertThat(t.agents.estimate()).isBetween(40L, 250L);
    assertThat(List.of(t.commands.estimate())).allMatch(n -> n >= 40 && n <= 250);
  }
}
