package dev.knockwatch.streams.discover;

import dev.knockwatch.streams.state.StateStrings;
import dev.knockwatch.streams.state.Varints;
import dev.knockwatch.streams.state.VersionedBinarySerde;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One hour of the console's overview (of one partition): refusals per minute by kind and address
 * class, the agents refused most, and the alerts first seen in the hour by rule and severity.
 * Bounded: at most {@value #MAX_SERIES} kind/class series, {@value #MAX_AGENTS} agents (a new one
 * takes the place only of an agent refused once; else it is counted in {@link #otherAgents}),
 * {@value #MAX_RULES} rules (the rest under {@value #OTHER}). An alert is counted at its first
 * sighting ({@link DiscoverProcessor} asks its command's timeline), so its updates count nothing.
 */
public final class HourOverview {

  static final int MAX_SERIES = 64;
  static final int MAX_AGENTS = 32;
  static final int MAX_RULES = 64;
  static final String OTHER = "(other)";

  final long hour;
  /** "kind/class" (class "-" when none) to 60 counts, one per minute of the hour. */
  final Map<String, long[]> perMinute;
  final Map<String, Long> agents;
  long otherAgents;
  final Map<String, Long> rules;
  final Map<String, Long> severities;

  HourOverview(long hour) {
    this(hour, new LinkedHashMap<>(), new LinkedHashMap<>(), 0, new LinkedHashMap<>(), new LinkedHashMap<>());
  }

  private HourOverview(long hour, Map<String, long[]> perMinute, Map<String, Long> agents, long otherAgents,
      Map<String, Long> rules, Map<String, Long> severities) {
    this.hour = hour;
    this.perMinute = perMinute;
    this.agents = agents;
    this.otherAgents = otherAgents;
    this.rules = rules;
    this.severities = severities;
  }

  void refused(int minute, String series, String agent) {
    long[] counts = perMinute.get(series);
    if (counts == null) {
      if (perMinute.size() >= MAX_SERIES) {
        series = OTHER;
        counts = perMinute.computeIfAbsent(OTHER, k -> new long[60]);
      } else {
        counts = new long[60];
        perMinute.put(series, counts);
      }
    }
    counts[minute]++;
    if (agent == null) {
      return;
    }
    Long n = agents.get(agent);
    if (n == null && agents.size() >= MAX_AGENTS) {
      String once = null;
      for (Map.Entry<String, Long> e : agents.entrySet()) {
        if (e.getValue() <= 1) {
          once = e.getKey();
          break;
        }
      }
      otherAgents++;
      if (once == null) {
        return;
      }
      agents.remove(once);
    }
    agents.merge(agent, 1L, Long::sum);
  }

  /** Counts a new alert. */
  void alerted(String rule, String severity) {
    String r = rules.containsKey(rule) || rules.size() < MAX_RULES ? rule : OTHER;
    rules.merge(r, 1L, Long::sum);
    severities.merge(severity, 1L, Long::sum);
  }

  static final Serde SERDE = new Serde();

  /** Version 1: hour, the series (name, 60 counts), agents, others, rules, severities. */
  static final class Serde extends VersionedBinarySerde<HourOverview> {
    private static final byte V1 = 1;

    Serde() {
      super(HourOverview.class, "hour-overview");
    }

    @Override
    protected byte[] encode(HourOverview v) {
      return StateStrings.writeValue(V1, 256 + v.perMinute.size() * 80, (out, strings) -> {
        Varints.write(out, v.hour);
        Varints.write(out, v.perMinute.size());
        for (Map.Entry<String, long[]> e : v.perMinute.entrySet()) {
          strings.write(out, e.getKey());
          for (long c : e.getValue()) {
            Varints.write(out, c);
          }
        }
        strings.writeCounts(out, v.agents);
        Varints.write(out, v.otherAgents);
        strings.writeCounts(out, v.rules);
        strings.writeCounts(out, v.severities);
      });
    }

    @Override
    protected HourOverview decode(byte[] bytes) throws IOException {
      return StateStrings.readValue(bytes, (in, strings, version) -> {
        long hour = Varints.read(in);
        int n = Varints.readInt(in, 0);
        if (n > MAX_SERIES + 1) {
          throw new IOException("not an hour overview");
        }
        Map<String, long[]> perMinute = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
          String name = strings.read(in);
          long[] c = new long[60];
          for (int m = 0; m < 60; m++) {
            c[m] = Varints.read(in);
          }
          perMinute.put(name, c);
        }
        Map<String, Long> agents = strings.readCounts(in);
        long other = Varints.read(in);
        Map<String, Long> rules = strings.readCounts(in);
        Map<String, Long> severities = strings.readCounts(in);
        if (agents == null || rules == null || severities == null) {
          throw new IOException("not an hour overview");
        }
        return new HourOverview(hour, perMinute, agents, other, rules, severities);
      }, V1);
    }
  }

  /** The agents, most refused first. */
  List<Map.Entry<String, Long>> topAgents() {
    List<Map.Entry<String, Long>> l = new ArrayList<>(agents.entrySet());
    l.sort(Map.Entry.<String, Long>comparingByValue().reversed());
    return l;
  }
}
