package dev.knockwatch.streams.lifecycle;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Alert.Severity;
import dev.knockwatch.streams.state.StateStrings;
import dev.knockwatch.streams.state.Varints;
import dev.knockwatch.streams.state.VersionedBinarySerde;
import dev.knockwatch.streams.count.DistinctCount;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A firing alert's state, binary: the lifecycle writes one for each alert that changed, every
 * second, and as JSON it was the largest part of detection's changelog (docs/PERFORMANCE.md). Its
 * fields in the order of {@link Alert} and {@link AlertState}, strings once each
 * ({@link StateStrings}: an alert's host is also its target and its last target), numbers as
 * varints ({@link Varints}). KeyValues earlier
 * versions wrote as JSON still read ({@link VersionedBinarySerde}).
 */
public final class AlertStateSerde extends VersionedBinarySerde<AlertState> {

  static final byte VERSION = 1;

  public AlertStateSerde() {
    super(AlertState.class, "firing alert");
  }

  @Override
  protected byte[] encode(AlertState s) {
    return StateStrings.writeValue(VERSION, 512, (out, strings) -> {
      alert(out, strings, s.alert());
      Varints.write(out, s.lastHitMs());
      Varints.write(out, s.lastEmittedMs());
      out.writeBoolean(s.pending());
      Varints.write(out, s.resolveAfterMs());
      EpisodeTargets t = s.targets();
      out.writeBoolean(t != null);
      if (t != null) {
        strings.writeCounts(out, t.tally());
        out.writeBoolean(t.distinctSketch() != null);
        if (t.distinctSketch() != null) {
          out.write(t.distinctSketch().bytes());
        }
        strings.write(out, t.last());
      }
    });
  }

  @Override
  protected AlertState decode(byte[] bytes) throws IOException {
    return StateStrings.readValue(bytes, (in, strings, version) -> {
      Alert alert = alert(in, strings);
      long lastHit = Varints.read(in);
      long lastEmitted = Varints.read(in);
      boolean pending = in.readBoolean();
      long resolveAfter = Varints.read(in);
      EpisodeTargets targets = null;
      if (in.readBoolean()) {
        Map<String, Long> tally = strings.readCounts(in);
        DistinctCount distinct = null;
        if (in.readBoolean()) {
          byte[] sketch = new byte[DistinctCount.BYTES];
          in.readFully(sketch);
          distinct = DistinctCount.of(sketch);
        }
        targets = new EpisodeTargets(tally, distinct, strings.read(in));
      }
      return new AlertState(alert, lastHit, lastEmitted, pending, resolveAfter, targets);
    }, VERSION);
  }

  private static void alert(DataOutputStream out, StateStrings strings, Alert a) throws IOException {
    strings.write(out, a.fingerprint());
    strings.write(out, a.rule());
    strings.write(out, a.severity() == null ? null : a.severity().name());
    strings.write(out, a.status() == null ? null : a.status().name());
    strings.write(out, a.commandId());
    strings.write(out, a.agentId());
    strings.write(out, a.role());
    strings.write(out, a.host());
    out.writeBoolean(a.port() != null);
    if (a.port() != null) {
      Varints.write(out, a.port());
    }
    Varints.write(out, a.count());
    Varints.write(out, a.windowStart());
    Varints.write(out, a.windowEnd());
    Varints.write(out, a.firstSeen());
    Varints.write(out, a.lastSeen());
    strings.write(out, a.summary());
    strings.writeList(out, a.sampleEventIds());
    strings.writeList(out, a.sources() == null ? null : a.sources());
    strings.write(out, a.policyVersion());
    out.writeByte(a.shadow() == null ? 0 : a.shadow() ? 2 : 1);
    List<Alert.Target> targets = a.targets();
    Varints.write(out, targets == null ? -1 : targets.size());
    if (targets != null) {
      for (Alert.Target t : targets) {
        strings.write(out, t.target());
        Varints.write(out, t.count());
      }
    }
    out.writeBoolean(a.distinctTargets() != null);
    if (a.distinctTargets() != null) {
      Varints.write(out, a.distinctTargets());
    }
    strings.write(out, a.lastTarget());
    Alert.Meta m = a.meta();
    out.writeBoolean(m != null);
    if (m != null) {
      strings.writeList(out, m.tags());
      strings.write(out, m.runbook());
      map(out, strings, m.labels());
      map(out, strings, m.annotations());
    }
  }

  private static Alert alert(DataInputStream in, StateStrings strings) throws IOException {
    String fingerprint = strings.read(in);
    String rule = strings.read(in);
    Severity severity = valueOf(Severity.class, strings.read(in));
    Alert.Status status = valueOf(Alert.Status.class, strings.read(in));
    String commandId = strings.read(in);
    String agentId = strings.read(in);
    String role = strings.read(in);
    String host = strings.read(in);
    Integer port = in.readBoolean() ? (int) Varints.read(in) : null;
    long count = Varints.read(in);
    Instant windowStart = Varints.readInstant(in);
    Instant windowEnd = Varints.readInstant(in);
    Instant firstSeen = Varints.readInstant(in);
    Instant lastSeen = Varints.readInstant(in);
    String summary = strings.read(in);
    List<String> samples = strings.readList(in);
    List<String> sourceNames = strings.readList(in);
    List<String> sources = sourceNames == null ? null : sourceNames.stream().map(AlertStateSerde::wireName).toList();
    String policyVersion = strings.read(in);
    byte shadow = in.readByte();
    int n = Varints.readInt(in, -1);
    List<Alert.Target> targets = null;
    if (n >= 0) {
      List<Alert.Target> read = new ArrayList<>(Math.min(n, 64));
      for (int i = 0; i < n; i++) {
        read.add(new Alert.Target(strings.read(in), Varints.read(in)));
      }
      targets = List.copyOf(read);
    }
    Long distinctTargets = in.readBoolean() ? Varints.read(in) : null;
    String lastTarget = strings.read(in);
    Alert.Meta meta = in.readBoolean()
        ? new Alert.Meta(strings.readList(in), strings.read(in), map(in, strings), map(in, strings)) : null;
    return new Alert(fingerprint, rule, severity, status, commandId, agentId, role, host, port, count, windowStart,
        windowEnd, firstSeen, lastSeen, summary, samples, sources, policyVersion, shadow == 0 ? null : shadow == 2,
        targets, distinctTargets, lastTarget, meta);
  }

  private static <E extends Enum<E>> E valueOf(Class<E> type, String name) {
    return name == null ? null : Enum.valueOf(type, name);
  }

  private static void map(DataOutputStream out, StateStrings strings, Map<String, String> map) throws IOException {
    Varints.write(out, map.size());
    for (Map.Entry<String, String> e : map.entrySet()) {
      strings.write(out, e.getKey());
      strings.write(out, e.getValue());
    }
  }

  private static Map<String, String> map(DataInputStream in, StateStrings strings) throws IOException {
    int n = Varints.readInt(in, 0);
    Map<String, String> map = new LinkedHashMap<>();
    for (int i = 0; i < n; i++) {
      map.put(strings.read(in), strings.read(in));
    }
    return map;
  }

  /**
   * A source as the alert keeps it: its wire name. A state written before sources were named by
   * their wire names holds the old enum's constant names ({@code SRT_VIOLATION}), read as theirs.
   */
  static String wireName(String stored) {
    return stored.matches("[A-Z0-9_]+") ? stored.toLowerCase(java.util.Locale.ROOT).replace('_', '-') : stored;
  }
}
