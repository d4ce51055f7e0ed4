package dev.knockwatch.streams.count;

import dev.knockwatch.streams.StateStrings;
import dev.knockwatch.streams.VersionedBinarySerde;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The count windows' values, binary: every refusal reads one and writes one. Version 2 writes its
 * strings each once ({@link StateStrings}); version 1's values, which differ only there, still read.
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
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(128);
    StateStrings strings = new StateStrings();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeByte(VERSION);
      out.writeLong(c.count());
      instant(out, c.firstSeen());
      instant(out, c.lastSeen());
      strings.write(out, c.agentId());
      strings.write(out, c.lastTarget());
      List<String> samples = c.sampleEventIds();
      out.writeInt(samples == null ? -1 : samples.size());
      if (samples != null) {
        for (String s : samples) {
          strings.write(out, s);
        }
      }
      Map<String, Long> targets = c.targets();
      out.writeInt(targets == null ? -1 : targets.size());
      if (targets != null) {
        for (Map.Entry<String, Long> t : targets.entrySet()) {
          strings.write(out, t.getKey());
          out.writeLong(t.getValue());
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e); // a byte array does not fail
    }
    return bytes.toByteArray();
  }

  static WindowCount read(byte[] bytes) throws IOException {
    DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes));
    StateStrings strings = new StateStrings();
    byte version = in.readByte();
    if (version != VERSION && version != FIRST_VERSION) {
      throw new IOException("unknown format version " + version);
    }
    long count = in.readLong();
    Instant first = instant(in);
    Instant last = instant(in);
    String agent = strings.read(in);
    String lastTarget = strings.read(in);
    int n = in.readInt();
    List<String> samples = null;
    if (n >= 0) {
      samples = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        samples.add(strings.read(in));
      }
      samples = List.copyOf(samples);
    }
    int m = in.readInt();
    Map<String, Long> targets = null;
    if (m >= 0) {
      targets = new LinkedHashMap<>();
      for (int i = 0; i < m; i++) {
        targets.put(strings.read(in), in.readLong());
      }
    }
    if (in.available() != 0) {
      throw new IOException(in.available() + " bytes after the value");
    }
    return new WindowCount(count, first, last, agent, lastTarget, samples, targets);
  }

  private static void instant(DataOutputStream out, Instant t) throws IOException {
    out.writeBoolean(t != null);
    if (t != null) {
      out.writeLong(t.getEpochSecond());
      out.writeInt(t.getNano());
    }
  }

  private static Instant instant(DataInputStream in) throws IOException {
    return in.readBoolean() ? Instant.ofEpochSecond(in.readLong(), in.readInt()) : null;
  }
}
