package dev.knockwatch.events;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.Locale;

/**
 * Writes a {@link ViolationEvent} as the bytes {@link Json#MAPPER} writes for it (same fields,
 * same order, absent fields left out), straight into a byte array: no serializer lookup, no
 * generator. Ingest writes one event per line it reads, so this is on its hot path; a test holds
 * it to the mapper's output.
 *
 * <p>Field names and enum values are encoded once. A string of printable ASCII with nothing to
 * escape (most of them) is copied as it is; any other goes through Jackson's own string
 * encoder, so escaping is the mapper's (but for a character beyond U+FFFF, written as its four
 * UTF-8 bytes where the mapper escapes its two surrogates: the same JSON string).
 *
 * <p>Each thread remembers what repeats from one event to the next: the last value of each field
 * that stays the same for a command's refusals (its id, agent, command text, file ...) with its
 * JSON bytes, and, for each instant field, the last second with its text.
 */
public final class EventWriter {

  private static final byte[] SCHEMA = ascii("{\"schema\":");
  private static final byte[] EVENT_ID = name("eventId");
  private static final byte[] COMMAND_ID = name("commandId");
  private static final byte[] AGENT_ID = name("agentId");
  private static final byte[] ROLE = name("role");
  private static final byte[] SOURCE = name("source");
  private static final byte[] KIND = name("kind");
  private static final byte[] ACTION = name("action");
  private static final byte[] HOST = name("host");
  private static final byte[] PORT = name("port");
  private static final byte[] METHOD = name("method");
  private static final byte[] URL = name("url");
  private static final byte[] PATH = name("path");
  private static final byte[] ADDRESS_CLASS = name("addressClass");
  private static final byte[] REASON = name("reason");
  private static final byte[] PROXY_ERROR = name("proxyError");
  private static final byte[] ERRNO = name("errno");
  private static final byte[] SYSCALL = name("syscall");
  private static final byte[] PID = name("pid");
  private static final byte[] OBSERVED_AT = name("observedAt");
  private static final byte[] INGESTED_AT = name("ingestedAt");
  private static final byte[] TIME_SOURCE = name("timeSource");
  private static final byte[] COMMAND_TEXT = name("commandText");
  private static final byte[] ORIGIN = ascii(",\"origin\":{");
  private static final byte[] FILE = name("file");
  private static final byte[] OFFSET = name("offset");
  private static final byte[] INGEST_HOST = name("ingestHost");
  private static final byte[] PROBE = ascii(",\"probe\":{");
  private static final byte[] NAME = name("name");
  private static final byte[] EXPECTED = name("expected");
  private static final byte[] OBSERVED = name("observed");
  private static final byte[] REFUSED = name("refused");
  private static final byte[] IDENTITY_CONFLICT = ascii(",\"identityConflict\":{");
  private static final byte[] TRUE = ascii("true");
  private static final byte[] FALSE = ascii("false");

  private static final byte[][] SOURCES = wireNames(Source.values());
  private static final byte[][] KINDS = wireNames(Kind.values());
  private static final byte[][] ADDRESS_CLASSES = wireNames(AddressClass.values());

  private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final long ONES = 0x0101010101010101L;
  private static final long HIGHS = 0x8080808080808080L;
  private static final long SPACES = ONES * 0x20;
  private static final long QUOTES = ONES * '"';
  private static final long BACKSLASHES = ONES * '\\';

  /**
   * Bytes to copy as they are: printable ASCII (DEL included: the mapper does not escape it)
   * but {@code "} and {@code \}. Eight bytes at a time; a flag in a word means at least one
   * such byte (a borrow only follows a byte below 0x20).
   */
  static boolean plain(byte[] b) {
    int i = 0;
    for (; i + 8 <= b.length; i += 8) {
      long x = (long) LONGS.get(b, i);
      long quote = x ^ QUOTES;
      long backslash = x ^ BACKSLASHES;
      long flags = ((x - SPACES) & ~x) | ((quote - ONES) & ~quote) | ((backslash - ONES) & ~backslash) | x;
      if ((flags & HIGHS) != 0) {
        return false;
      }
    }
    for (; i < b.length; i++) {
      byte c = b[i];
      if (c < 0x20 || c == '"' || c == '\\') { // non-ASCII bytes are negative
        return false;
      }
    }
    return true;
  }

  /** The fields whose last value each thread keeps encoded. */
  private enum Repeated { COMMAND_ID, AGENT_ID, ROLE, ACTION, HOST, REASON, PROXY_ERROR, COMMAND_TEXT, FILE, INGEST_HOST }

  private static final ThreadLocal<Out> OUT = ThreadLocal.withInitial(Out::new);

  private EventWriter() {}

  public static byte[] toBytes(ViolationEvent e) {
    Out o = OUT.get();
    o.len = 0;
    o.raw(SCHEMA);
    o.number(e.schema());
    o.string(EVENT_ID, e.eventId());
    o.repeated(COMMAND_ID, e.commandId(), Repeated.COMMAND_ID);
    o.repeated(AGENT_ID, e.agentId(), Repeated.AGENT_ID);
    o.repeated(ROLE, e.role(), Repeated.ROLE);
    o.wire(SOURCE, SOURCES, e.source());
    o.wire(KIND, KINDS, e.kind());
    o.repeated(ACTION, e.action(), Repeated.ACTION);
    o.repeated(HOST, e.host(), Repeated.HOST);
    o.number(PORT, e.port());
    o.string(METHOD, e.method());
    o.string(URL, e.url());
    o.string(PATH, e.path());
    o.wire(ADDRESS_CLASS, ADDRESS_CLASSES, e.addressClass());
    o.repeated(REASON, e.reason(), Repeated.REASON);
    o.repeated(PROXY_ERROR, e.proxyError(), Repeated.PROXY_ERROR);
    o.string(ERRNO, e.errno());
    o.string(SYSCALL, e.syscall());
    o.number(PID, e.pid());
    o.instant(OBSERVED_AT, e.observedAt(), 0);
    o.instant(INGESTED_AT, e.ingestedAt(), 1);
    o.string(TIME_SOURCE, e.timeSource());
    o.repeated(COMMAND_TEXT, e.commandText(), Repeated.COMMAND_TEXT);
    if (e.origin() != null) {
      o.raw(ORIGIN);
      o.repeated(FILE, e.origin().file(), Repeated.FILE);
      o.field(OFFSET);
      o.number(e.origin().offset());
      o.repeated(INGEST_HOST, e.origin().ingestHost(), Repeated.INGEST_HOST);
      o.raw((byte) '}');
    }
    if (e.probe() != null) {
      o.raw(PROBE);
      o.string(NAME, e.probe().name());
      o.string(EXPECTED, e.probe().expected());
      o.string(OBSERVED, e.probe().observed());
      o.field(REFUSED);
      o.raw(e.probe().refused() ? TRUE : FALSE);
      o.raw((byte) '}');
    }
    if (e.identityConflict() != null) {
      o.raw(IDENTITY_CONFLICT);
      o.string(AGENT_ID, e.identityConflict().agentId());
      o.string(COMMAND_ID, e.identityConflict().commandId());
      o.raw((byte) '}');
    }
    o.raw((byte) '}');
    return Arrays.copyOf(o.buf, o.len);
  }

  /** One thread's output buffer, reused from event to event, and its last repeated values. */
  private static final class Out {
    byte[] buf = new byte[1024];
    int len;
    final String[] lastRaw = new String[Repeated.values().length];
    final byte[][] lastQuoted = new byte[Repeated.values().length][];

    void room(int n) {
      if (len + n > buf.length) {
        buf = Arrays.copyOf(buf, Math.max(buf.length * 2, len + n));
      }
    }

    void raw(byte b) {
      room(1);
      buf[len++] = b;
    }

    void raw(byte[] bytes) {
      room(bytes.length);
      System.arraycopy(bytes, 0, buf, len, bytes.length);
      len += bytes.length;
    }

    /** A field's name, after a comma unless it is the first of its object. */
    void field(byte[] name) {
      room(name.length + 1);
      if (buf[len - 1] != '{') {
        buf[len++] = ',';
      }
      System.arraycopy(name, 0, buf, len, name.length);
      len += name.length;
    }

    void string(byte[] name, String value) {
      if (value != null) {
        field(name);
        quoted(value);
      }
    }

    void repeated(byte[] name, String value, Repeated which) {
      if (value != null) {
        field(name);
        int i = which.ordinal();
        if (!value.equals(lastRaw[i])) {
          int start = len;
          quoted(value);
          lastRaw[i] = value;
          lastQuoted[i] = Arrays.copyOfRange(buf, start, len);
        } else {
          raw(lastQuoted[i]);
        }
      }
    }

    void quoted(String s) {
      byte[] utf8 = s.getBytes(StandardCharsets.UTF_8); // an array copy when the text is ASCII
      room(utf8.length + 2);
      buf[len++] = '"';
      if (plain(utf8)) {
        System.arraycopy(utf8, 0, buf, len, utf8.length);
        len += utf8.length;
      } else { // something to escape or to encode: Jackson's own encoder does it
        raw(JsonStringEncoder.getInstance().quoteAsUTF8(s));
      }
      raw((byte) '"');
    }

    void number(byte[] name, Integer value) {
      if (value != null) {
        field(name);
        number(value.longValue());
      }
    }

    void number(long v) {
      if (v == Long.MIN_VALUE) {
        raw(ascii(Long.toString(v)));
        return;
      }
      room(20);
      if (v < 0) {
        buf[len++] = '-';
        v = -v;
      }
      int digits = 1;
      for (long p = 10; p <= v && digits < 19; p *= 10) {
        digits++;
      }
      for (int i = len + digits - 1; i >= len; i--) {
        buf[i] = (byte) ('0' + v % 10);
        v /= 10;
      }
      len += digits;
    }

    /** Per instant field: the last second written, and its text (a batch's events share seconds). */
    final long[] lastSecond = {-1, -1};
    final byte[][] lastSecondText = new byte[2][IsoInstant.SECONDS_LENGTH];

    void instant(byte[] name, Instant value, int slot) {
      if (value != null) {
        field(name);
        room(IsoInstant.MAX_LENGTH + 2);
        buf[len++] = '"';
        long sec = value.getEpochSecond();
        if (!IsoInstant.fast(sec)) {
          len = IsoInstant.write(value, buf, len);
        } else {
          if (sec != lastSecond[slot]) {
            IsoInstant.writeSeconds(sec, lastSecondText[slot], 0);
            lastSecond[slot] = sec;
          }
          System.arraycopy(lastSecondText[slot], 0, buf, len, IsoInstant.SECONDS_LENGTH);
          len = IsoInstant.writeFraction(value.getNano(), buf, len + IsoInstant.SECONDS_LENGTH);
        }
        buf[len++] = '"';
      }
    }

    void wire(byte[] name, byte[][] names, Enum<?> value) {
      if (value != null) {
        field(name);
        raw(names[value.ordinal()]);
      }
    }
  }

  private static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }

  /** {@code "name":} */
  private static byte[] name(String name) {
    return ascii("\"" + name + "\":");
  }

  /** The enums' wire names, quoted: {@code SRT_VIOLATION} is {@code "srt-violation"}. */
  private static byte[][] wireNames(Enum<?>[] values) {
    byte[][] out = new byte[values.length][];
    for (Enum<?> v : values) {
      out[v.ordinal()] = ascii("\"" + v.name().toLowerCase(Locale.ROOT).replace('_', '-') + "\"");
    }
    return out;
  }
}
