package dev.knockwatch.streams.state;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The strings of one binary state value ({@link VersionedBinarySerde}), each written once: a
 * string the value already holds (the agent id of every sighting, a host refused again) is
 * written as its index. {@link #writeValue} and {@link #readValue} frame a value (its version byte, and
 * no byte after it) and make one for it. Each string starts with a tag:
 * <ul>
 *   <li>{@code 0}: null;
 *   <li>{@code 1}: the text in modified UTF-8 ({@link DataOutputStream#writeUTF}, which keeps any
 *   Java string, lone surrogates and NUL included). The tag is the "present" boolean of the first
 *   binary versions, so their values read alike;
 *   <li>{@code 2}: 32 lowercase hex digits, as their 16 bytes (the event ids ingest makes);
 *   <li>{@code 3}: an unsigned byte, the index of a string written before in this value (the first
 *   {@value #MAX_TABLE} distinct ones are indexed: a value holds a few dozen strings).
 * </ul>
 * Text longer than {@value #MAX_CHARS} characters (never in a state value: ingest bounds every
 * field) is cut there, as modified UTF-8 holds at most 65,535 bytes.
 */
public final class StateStrings {

  public static final int MAX_CHARS = 16_000;
  static final int MAX_TABLE = 64;
  private static final byte NULL = 0;
  private static final byte TEXT = 1;
  private static final byte HEX32 = 2;
  private static final byte SEEN = 3;
  private static final char[] HEX = "0123456789abcdef".toCharArray();

  /** What a value's format writes after its version byte. */
  @FunctionalInterface
  public interface Writer {
    void write(DataOutputStream out, StateStrings strings) throws IOException;
  }

  /** What a value's format reads after its version byte (one of those {@link #readValue} takes). */
  @FunctionalInterface
  public interface Reader<T> {
    T read(DataInputStream in, StateStrings strings, byte version) throws IOException;
  }

  /** A value's bytes: {@code version}, then what {@code body} writes, its strings each once; {@code size} is a first guess. */
  public static byte[] writeValue(byte version, int size, Writer body) {
    ValueBytes bytes = new ValueBytes(size);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeByte(version);
      body.write(out, new StateStrings());
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e); // a byte array does not fail
    }
    return bytes.toByteArray();
  }

  /**
   * The value {@code bytes} hold: their version byte, which must be one of {@code versions}, then
   * what {@code body} reads, which must be every byte.
   */
  public static <T> T readValue(byte[] bytes, Reader<T> body, byte... versions) throws IOException {
    DataInputStream in = new DataInputStream(new java.io.ByteArrayInputStream(bytes));
    byte version = in.readByte();
    boolean known = false;
    for (byte v : versions) {
      known |= v == version;
    }
    if (!known) {
      throw new IOException("unknown format version " + version);
    }
    T value = body.read(in, new StateStrings(), version);
    if (in.available() != 0) {
      throw new IOException(in.available() + " bytes after the value");
    }
    return value;
  }

  /**
   * The strings written or read so far, in their order: searched one by one (most differ in length),
   * which for a few dozen costs less than hashing each new one.
   */
  private String[] table;
  private int size;

  public void write(DataOutputStream out, String s) throws IOException {
    if (s == null) {
      out.writeByte(NULL);
      return;
    }
    if (s.length() > MAX_CHARS) {
      s = s.substring(0, MAX_CHARS);
    }
    int at = indexOf(s);
    if (at >= 0) {
      out.writeByte(SEEN);
      out.writeByte(at);
      return;
    }
    if (isHex32(s)) {
      out.writeByte(HEX32);
      for (int i = 0; i < 32; i += 2) {
        out.writeByte(Character.digit(s.charAt(i), 16) << 4 | Character.digit(s.charAt(i + 1), 16));
      }
    } else {
      out.writeByte(TEXT);
      out.writeUTF(s);
    }
    remember(s);
  }

  private int indexOf(String s) {
    for (int i = 0; i < size; i++) {
      String t = table[i];
      if (t == s || t.length() == s.length() && t.equals(s)) {
        return i;
      }
    }
    return -1;
  }

  private void remember(String s) {
    if (size == MAX_TABLE) {
      return;
    }
    if (table == null) {
      table = new String[8];
    } else if (size == table.length) {
      table = java.util.Arrays.copyOf(table, Math.min(MAX_TABLE, 2 * size));
    }
    table[size++] = s;
  }

  /** A list of strings or null: its size as a varint (-1 for null), then each string. */
  public void writeList(DataOutputStream out, List<String> list) throws IOException {
    Varints.write(out, list == null ? -1 : list.size());
    if (list != null) {
      for (String s : list) {
        write(out, s);
      }
    }
  }

  public List<String> readList(DataInputStream in) throws IOException {
    int n = Varints.readInt(in, -1);
    if (n < 0) {
      return null;
    }
    List<String> list = new ArrayList<>(Math.min(n, 64));
    for (int i = 0; i < n; i++) {
      list.add(read(in));
    }
    return List.copyOf(list);
  }

  /** Counts by name, in their order, or null: the size as a varint (-1 for null), then each name and its count. */
  public void writeCounts(DataOutputStream out, Map<String, Long> counts) throws IOException {
    Varints.write(out, counts == null ? -1 : counts.size());
    if (counts != null) {
      for (Map.Entry<String, Long> e : counts.entrySet()) {
        write(out, e.getKey());
        Varints.write(out, e.getValue());
      }
    }
  }

  public Map<String, Long> readCounts(DataInputStream in) throws IOException {
    int n = Varints.readInt(in, -1);
    if (n < 0) {
      return null;
    }
    Map<String, Long> counts = new LinkedHashMap<>();
    for (int i = 0; i < n; i++) {
      counts.put(read(in), Varints.read(in));
    }
    return counts;
  }

  public String read(DataInputStream in) throws IOException {
    byte tag = in.readByte();
    String s;
    switch (tag) {
      case NULL -> {
        return null;
      }
      case TEXT -> s = in.readUTF();
      case HEX32 -> {
        char[] c = new char[32];
        for (int i = 0; i < 32; i += 2) {
          int b = in.readUnsignedByte();
          c[i] = HEX[b >>> 4];
          c[i + 1] = HEX[b & 0xf];
        }
        s = new String(c);
      }
      case SEEN -> {
        int at = in.readUnsignedByte();
        if (at >= size) {
          throw new IOException("a reference to string " + at + " of " + size);
        }
        return table[at];
      }
      default -> throw new IOException("no string starts with tag " + tag);
    }
    remember(s);
    return s;
  }

  private static boolean isHex32(String s) {
    if (s.length() != 32) {
      return false;
    }
    for (int i = 0; i < 32; i++) {
      char c = s.charAt(i);
      if (!(c >= '0' && c <= '9' || c >= 'a' && c <= 'f')) {
        return false;
      }
    }
    return true;
  }
}
