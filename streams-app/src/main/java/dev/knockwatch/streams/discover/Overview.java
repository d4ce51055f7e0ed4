package dev.knockwatch.streams.discover;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The console's overview of the last hours, from the {@link HourOverview} and {@link RoleHour}
 * buckets: refusals per minute by kind and address class, the agents, destinations and rules seen
 * most, and the alerts first seen by severity. Its size is bounded by the buckets', whatever the
 * traffic.
 */
public final class Overview {

  private Overview() {}

  public record Count(String name, long count) {}

  public record HostCount(String target, String role, long refusals, long commands) {}

  /**
   * @param start the first minute (epoch ms); each series holds one count per minute from it
   * @param series "kind/class" to its counts per minute ("-" for no class)
   * @param otherAgents refusals of agents beyond each hour's bound
   */
  public record Answer(Instant since, Instant until, long start, int minutes, Map<String, long[]> series, long refusals,
      List<Count> agents, long otherAgents, List<HostCount> hosts, List<Count> rules, Map<String, Long> severities) {}

  public static Answer of(List<HourOverview> overviews, List<RoleHour> roleHours, Instant since, Instant until, int top) {
    long start = Math.floorDiv(since.toEpochMilli(), 60_000) * 60_000;
    int minutes = (int) Math.max(1, Math.min(60 * 24 * 31, (until.toEpochMilli() - start + 59_999) / 60_000));
    Map<String, long[]> series = new TreeMap<>();
    Map<String, Long> agents = new HashMap<>();
    Map<String, Long> rules = new HashMap<>();
    Map<String, Long> severities = new TreeMap<>();
    long other = 0;
    long refusals = 0;
    for (HourOverview h : overviews) {
      long hourStart = h.hour * DiscoverProcessor.HOUR_MS;
      for (Map.Entry<String, long[]> s : h.perMinute.entrySet()) {
        long[] into = series.computeIfAbsent(s.getKey(), k -> new long[minutes]);
        for (int m = 0; m < 60; m++) {
          long at = (hourStart + m * 60_000L - start) / 60_000;
          if (at >= 0 && at < minutes && s.getValue()[m] > 0) {
            into[(int) at] += s.getValue()[m];
            refusals += s.getValue()[m];
          }
        }
      }
      h.agents.forEach((k, v) -> agents.merge(k, v, Long::sum));
      other += h.otherAgents;
      h.rules.forEach((k, v) -> rules.merge(k, v, Long::sum));
      h.severities.forEach((k, v) -> severities.merge(k, v, Long::sum));
    }
    Map<String, HostTally> hosts = new HashMap<>();
    Map<String, String> roles = new HashMap<>();
    for (RoleHour r : roleHours) {
      for (HostTally t : r.hosts) {
        String key = r.role + '\u0000' + t.target();
        HostTally into = hosts.get(key);
        if (into == null) {
          hosts.put(key, t.copy());
          roles.put(key, r.role);
        } else {
          into.merge(t);
        }
      }
    }
    List<HostCount> topHosts = new ArrayList<>();
    hosts.entrySet().stream()
        .sorted((a, b) -> Long.compare(b.getValue().refusals, a.getValue().refusals))
        .filter(e -> e.getValue().refusals > 0).limit(top)
        .forEach(e -> topHosts.add(new HostCount(e.getValue().target(), roles.get(e.getKey()), e.getValue().refusals,
            e.getValue().commands.estimate())));
    return new Answer(since, until, start, minutes, new LinkedHashMap<>(series), refusals, top(agents, top), other,
        topHosts, top(rules, top), severities);
  }

  private static List<Count> top(Map<String, Long> counts, int n) {
    return counts.entrySet().stream()
        .sorted(Map.Entry.<String, Long>comparingByValue().reversed().thenComparing(Map.Entry.comparingByKey()))
        .limit(n).map(e -> new Count(e.getKey(), e.getValue())).toList();
  }
}
