package dev.knockwatch.streams.count;

import dev.knockwatch.streams.state.StateStrings;
import dev.knockwatch.streams.state.Varints;
import dev.knockwatch.streams.state.VersionedBinarySerde;
import java.io.DataInputStream;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The count windows' values, binary: every refusal reads one and writes one. Version 2 writes its
 * strings each once ({@link StateStrings}) and its numbers as varints ({@link Varints}); version
 * 1's values (fixed-width numbers) still read.
 */
public final class WindowCountSerde extends VersionedBinarySerde<WindowCount> {

  static final byte VERSION = 2;
  private static final byte FIRST_VERSION = 1;

  public WindowCountSerde() {
    super(WindowCount.class, "count window");
  }

  @Override
  protected byte[] encode(WindowCount c) {
    return write(c);
  }

  @Override
  protected WindowCount decode(byte[] bytes) throws IOException {
    return read(bytes);
  }

  static byte[] write(WindowCount c) {
    return StateStrings.writeValue(VERSION, 128, (out, strings) -> {
      Varints.write(out, c.count());
      Varints.write(out, c.firstSeen());
      Varints.write(out, c.lastSeen());
      strings.write(out, c.agentId());
      strings.write(out, c.lastTarget());
      strings.writeList(out, c.sampleEventIds());
      strings.writeCounts(out, c.targets());
    });
  }

  static WindowCount read(byte[] bytes) throws IOException {
    return StateStrings.readValue(bytes, (in, strings, version) -> {
      boolean first = version == FIRST_VERSION;
      long count = number(in, first);
      Instant firstSeen = instant(in, first);
      Instant lastSeen = instant(in, first);
      String agent = strings.read(in);
      String lastTarget = strings.read(in);
      int n = size(in, first);
      List<String> samples = null;
      if (n >= 0) {
        samples = new ArrayList<>(Math.min(n, 64));
        for (int i = 0; i < n; i++) {
          samples.add(strings.read(in));
        }
        samples = List.copyOf(samples);
      }
      int m = size(in, first);
      Map<String, Long> targets = null;
      if (m >= 0) {
        targets = new LinkedHashMap<>();
        for (int i = 0; i < m; i++) {
          targets.put(strings.read(in), number(in, first));
        }
      }
      return new WindowCount(count, firstSeen, lastSeen, agent, lastTarget, samples, targets);
    }, VERSION, FIRST_VERSION);
  }

  /** A number as version 1 wrote it (8 bytes) or as the current version does (a varint). */
  static long number(DataInputStream in, boolean firstVersion) throws IOException {
    return firstVersion ? in.readLong() : Varints.read(in);
  }

  /** A count of items, -1 for none, as version 1 wrote it (4 bytes) or as the current version does. */
  static int size(DataInputStream in, boolean firstVersion) throws IOException {
    return firstVersion ? in.readInt() : Varints.readInt(in, -1);
  }

  static Instant instant(DataInputStream in, boolean firstVersion) throws IOException {
    if (!firstVersion) {
      return Varints.readInstant(in);
    }
    return in.readBoolean() ? Instant.ofEpochSecond(in.readLong(), in.readInt()) : null;
  }
}
