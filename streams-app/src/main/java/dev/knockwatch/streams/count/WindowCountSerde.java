package dev.knockwatch.streams.count;

import dev.knockwatch.events.Json;
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
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;

/**
 * The count windows' values in a compact binary form: every refusal reads one and writes one, and
 * as JSON that was a tenth of the detection thread. The first byte is a format version, which can
 * never start a JSON text, so values written as JSON by earlier versions (in a changelog being
 * restored) are still read, as JSON.
 */
public final class WindowCountSerde implements Serde<WindowCount> {

  static final byte VERSION = 1;
  private static final Deserializer<WindowCount> JSON = Json.serde(WindowCount.class).deserializer();

  @Override
  public Serializer<WindowCount> serializer() {
    return (topic, c) -> c == null ? null : write(c);
  }

  @Override
  public Deserializer<WindowCount> deserializer() {
    return (topic, bytes) -> {
      if (bytes == null) {
        return null;
      }
      if (bytes.length > 0 && bytes[0] == '{') {
        return JSON.deserialize(topic, bytes);
      }
      try {
        return read(bytes);
      } catch (IOException | RuntimeException e) {
        throw new SerializationException("not a count window value (" + bytes.length + " bytes)", e);
      }
    };
  }

  static byte[] write(WindowCount c) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(128);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeByte(VERSION);
      out.writeLong(c.count());
      instant(out, c.firstSeen());
      instant(out, c.lastSeen());
      string(out, c.agentId());
      string(out, c.lastTarget());
      List<String> samples = c.sampleEventIds();
      out.writeInt(samples == null ? -1 : samples.size());
      if (samples != null) {
        for (String s : samples) {
          string(out, s);
        }
      }
      Map<String, Long> targets = c.targets();
      out.writeInt(targets == null ? -1 : targets.size());
      if (targets != null) {
        for (Map.Entry<String, Long> t : targets.entrySet()) {
          string(out, t.getKey());
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
    byte version = in.readByte();
    if (version != VERSION) {
      throw new IOException("unknown format version " + version);
    }
    long count = in.readLong();
    Instant first = instant(in);
    Instant last = instant(in);
    String agent = string(in);
    String lastTarget = string(in);
    int n = in.readInt();
    List<String> samples = null;
    if (n >= 0) {
      samples = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        samples.add(string(in));
      }
      samples = List.copyOf(samples);
    }
    int m = in.readInt();
    Map<String, Long> targets = null;
    if (m >= 0) {
      targets = new LinkedHashMap<>();
      for (int i = 0; i < m; i++) {
        targets.put(string(in), in.readLong());
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

  /** Modified UTF-8 holds at most 65,535 bytes: longer text (never seen here) is cut. */
  private static void string(DataOutputStream out, String s) throws IOException {
    out.writeBoolean(s != null);
    if (s != null) {
      out.writeUTF(s.length() > 16_000 ? s.substring(0, 16_000) : s);
    }
  }

  private static String string(DataInputStream in) throws IOException {
    return in.readBoolean() ? in.readUTF() : null;
  }
}
