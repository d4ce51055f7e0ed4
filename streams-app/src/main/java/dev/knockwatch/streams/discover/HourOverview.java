package dev.knockwatch.streams.discover;

import dev.knockwatch.streams.StateStrings;
import dev.knockwatch.streams.Varints;
import dev.knockwatch.streams.VersionedBinarySerde;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One hour of the console's overview (of one partition): refusals per minute by kind and address
 * class, the agents refused most, and the alerts first seen in the hour by rule and severity.
 * Bounded: at most {@value #MAX_SERIES} kind/class series, {@value #MAX_AGENTS} agents (a new one
 * takes the place only of an agent refused once; else it is counted in {@link #otherAgents}),
 * {@value #MAX_RULES} rules (the rest under {@value #OTHER}), and {@value #MAX_FINGERPRINTS} alert
 * fingerprints remembered so that an alert's updates count once.
 */
public final class HourOverview {

  static final int MAX_SERIES = 64;
  static final int MAX_AGENTS = 32;
  static final int MAX_RULES = 64;
  static final int MAX_FINGERPRINTS = 4096;
  static final String OTHER = "(other)";

  final long hour;
  /** "kind/class" (class "-" when none) to 60 counts, one per minute of the hour. */
  final Map<String, long[]> perMinute;
  final Map<String, Long> agents;
  long otherAgents;
  final Map<String, Long> rules;
  final Map<String, Long> severities;
  final Set<Long> fingerprints;

  HourOverview(long hour) {
    this(hour, new LinkedHashMap<>(), new LinkedHashMap<>(), 0, new LinkedHashMap<>(), new LinkedHashMap<>(),
        new HashSet<>());
  }

  private HourOverview(long hour, Map<String, long[]> perMinute, Map<String, Long> agents, long otherAgents,
      Map<String, Long> rules, Map<String, Long> severities, Set<Long> fingerprints) {
    this.hour = hour;
    this.perMinute = perMinute;
    this.agents = agents;
    this.otherAgents = otherAgents;
    this.rules = rules;
    this.severities = severities;
    this.fingerprints = fingerprints;
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
      String once = agents.entrySet().stream().filter(e -> e.getValue() <= 1).map(Map.Entry::getKey).findFirst()
          .orElse(null);
      if (once == null) {
        otherAgents++;
        return;
      }
      agents.remove(once);
      otherAgents++;
    }
    agents.merge(agent, 1L, Long::sum);
  }

  /** Counts an alert once per fingerprint: false when it was counted (or when the hour remembers too many). */
  boolean alerted(String fingerprint, String rule, String severity) {
    if (fingerprints.size() >= MAX_FINGERPRINTS || !fingerprints.add(Kmv.hash(fingerprint))) {
      return false;
    }
    String r = rules.containsKey(rule) || rules.size() < MAX_RULES ? rule : OTHER;
    rules.merge(r, 1L, Long::sum);
    severities.merge(severity, 1L, Long::sum);
    return true;
  }

  static final Serde SERDE = new Serde();

  /** Version 1: hour, the series (name, 60 counts), agents, others, rules, severities, fingerprints. */
  static final class Serde extends VersionedBinarySerde<HourOverview> {
    private static final byte V1 = 1;

    Serde() {
      super(HourOverview.class, "hour-overview");
    }

    @Override
    protected byte[] encode(HourOverview v) {
      return StateStrings.writeValue(V1, 256 + v.perMinute.size() * 80 + v.fingerprints.size() * 8, (out, strings) -> {
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
        Varints.write(out, v.fingerprints.size());
        for (long f : v.fingerprints) {
          out.writeLong(f);
        }
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
        int f = Varints.readInt(in, 0);
        if (agents == null || rules == null || severities == null || f > MAX_FINGERPRINTS) {
          throw new IOException("not an hour overview");
        }
        Set<Long> fingerprints = new HashSet<>(f * 2);
        for (int i = 0; i < f; i++) {
          fingerprints.add(in.readLong());
        }
        return new HourOverview(hour, perMinute, agents, other, rules, severities, fingerprints);
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
