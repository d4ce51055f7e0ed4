package dev.knockwatch.streams;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The strings of one binary state value ({@link VersionedBinarySerde}), each written once: a
 * string the value already holds (the agent id of every sighting, a host refused again) is
 * written as its index. Make one for each value written or read. Each string starts with a tag:
 * <ul>
 *   <li>{@code 0}: null;
 *   <li>{@code 1}: the text in modified UTF-8 ({@link DataOutputStream#writeUTF}, which keeps any
 *   Java string, lone surrogates and NUL included). The tag is the "present" boolean of the first
 *   binary versions, so their values read alike;
 *   <li>{@code 2}: 32 lowercase hex digits, as their 16 bytes (the event ids ingest makes);
 *   <li>{@code 3}: an unsigned short, the index of a string written before in this value.
 * </ul>
 * Text longer than {@value #MAX_CHARS} characters (never in a state value: ingest bounds every
 * field) is cut there, as modified UTF-8 holds at most 65,535 bytes.
 */
public final class StateStrings {

  static final int MAX_CHARS = 16_000;
  private static final int MAX_TABLE = 0xffff;
  private static final byte NULL = 0;
  private static final byte TEXT = 1;
  private static final byte HEX32 = 2;
  private static final byte SEEN = 3;
  private static final char[] HEX = "0123456789abcdef".toCharArray();

  /** Writing: each string written so far, and its index. */
  private Map<String, Integer> written;
  /** Reading: each string read so far. */
  private List<String> read;

  public void write(DataOutputStream out, String s) throws IOException {
    if (s == null) {
      out.writeByte(NULL);
      return;
    }
    if (s.length() > MAX_CHARS) {
      s = s.substring(0, MAX_CHARS);
    }
    if (written == null) {
      written = new HashMap<>();
    }
    Integer at = written.get(s);
    if (at != null) {
      out.writeByte(SEEN);
      out.writeShort(at);
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
    if (written.size() < MAX_TABLE) {
      written.put(s, written.size());
    }
  }

  public String read(DataInputStream in) throws IOException {
    byte tag = in.readByte();
    if (tag == NULL) {
      return null;
    }
    if (read == null) {
      read = new ArrayList<>();
    }
    String s;
    switch (tag) {
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
        int at = in.readUnsignedShort();
        if (at >= read.size()) {
          throw new IOException("a reference to string " + at + " of " + read.size());
        }
        return read.get(at);
      }
      default -> throw new IOException("no string starts with tag " + tag);
    }
    if (read.size() < MAX_TABLE) {
      read.add(s);
    }
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
