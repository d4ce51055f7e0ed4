package dev.knockwatch.events;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import java.lang.invoke.LambdaMetafactory;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;
import java.lang.reflect.RecordComponent;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

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

  private static final byte[] TRUE = ascii("true");
  private static final byte[] FALSE = ascii("false");

  /**
   * The string fields whose last value each thread keeps encoded, by their path: a command's
   * refusals repeat them (its id, agent, command text, file ...).
   */
  private static final List<String> REPEATED = List.of("commandId", "agentId", "role", "action", "host", "reason",
      "proxyError", "commandText", "origin.file", "origin.ingestHost");

  /**
   * How the writer writes each field of the event, derived from the record itself: its
   * components, in their order (the mapper's), by their names and types. A field added to the
   * event is written with no change here; one of a type it does not know stops the class from
   * loading, so no event is written without it.
   */
  private static final Field[] EVENT;
  /** The instant fields, each with a slot of its own in {@link Out} (counted while {@link #EVENT} is derived). */
  private static int instants;

  static {
    EVENT = fields(ViolationEvent.class, "");
  }

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

  private static final ThreadLocal<Out> OUT = ThreadLocal.withInitial(Out::new);

  private EventWriter() {}

  public static byte[] toBytes(ViolationEvent e) {
    Out o = OUT.get();
    o.len = 0;
    o.object(EVENT, e);
    return Arrays.copyOf(o.buf, o.len);
  }

  /** One field of the event or of a record in it: its quoted name, how it is read, how it is written. */
  private static final class Field {
    static final int NUMBER = 0;
    static final int BOOLEAN = 1;
    static final int STRING = 2;
    static final int REPEATED_STRING = 3;
    static final int WIRE = 4;
    static final int INSTANT = 5;
    static final int OBJECT = 6;

    final byte[] name;
    final Function<Object, Object> get;
    final int kind;
    /** The repeated string's or the instant's slot in {@link Out}. */
    int slot;
    /** An enum's wire names, by ordinal. */
    byte[][] wires;
    /** A record's own fields. */
    Field[] fields;

    Field(String name, Function<Object, Object> get, int kind) {
      this.name = name(name);
      this.get = get;
      this.kind = kind;
    }
  }

  /** The fields of {@code type}, a record, in the order of its components; {@code path} names where it stands. */
  private static Field[] fields(Class<?> type, String path) {
    RecordComponent[] components = type.getRecordComponents();
    Field[] out = new Field[components.length];
    for (int i = 0; i < components.length; i++) {
      RecordComponent c = components[i];
      Class<?> t = c.getType();
      Function<Object, Object> get = getter(c);
      Field f;
      if (t == int.class || t == Integer.class || t == long.class || t == Long.class) {
        f = new Field(c.getName(), get, Field.NUMBER);
      } else if (t == boolean.class || t == Boolean.class) {
        f = new Field(c.getName(), get, Field.BOOLEAN);
      } else if (t == String.class) {
        int slot = REPEATED.indexOf(path + c.getName());
        f = new Field(c.getName(), get, slot >= 0 ? Field.REPEATED_STRING : Field.STRING);
        f.slot = slot;
      } else if (t.isEnum()) {
        f = new Field(c.getName(), get, Field.WIRE);
        f.wires = wireNames((Enum<?>[]) t.getEnumConstants());
      } else if (t == Instant.class) {
        f = new Field(c.getName(), get, Field.INSTANT);
        f.slot = instants++;
      } else if (t.isRecord()) {
        f = new Field(c.getName(), get, Field.OBJECT);
        f.fields = fields(t, path + c.getName() + ".");
      } else {
        throw new IllegalStateException("EventWriter cannot write " + type.getSimpleName() + "." + c.getName()
            + " of type " + t.getName() + ": teach it the type");
      }
      out[i] = f;
    }
    return out;
  }

  /** A component's accessor as a function: no reflection per event. */
  @SuppressWarnings("unchecked")
  private static Function<Object, Object> getter(RecordComponent c) {
    try {
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      MethodHandle accessor = lookup.unreflect(c.getAccessor());
      return (Function<Object, Object>) LambdaMetafactory.metafactory(lookup, "apply",
          MethodType.methodType(Function.class), MethodType.methodType(Object.class, Object.class), accessor,
          accessor.type().wrap()).getTarget().invokeExact();
    } catch (Throwable e) {
      throw new IllegalStateException("cannot read " + c, e);
    }
  }

  /** One thread's output buffer, reused from event to event, and its last repeated values. */
  private static final class Out {
    byte[] buf = new byte[1024];
    int len;
    final String[] lastRaw = new String[REPEATED.size()];
    final byte[][] lastQuoted = new byte[REPEATED.size()][];

    /** {@code record}'s fields as a JSON object; absent ones (null) are left out, as the mapper does. */
    void object(Field[] fields, Object record) {
      raw((byte) '{');
      for (Field f : fields) {
        Object v = f.get.apply(record);
        switch (f.kind) {
          case Field.NUMBER -> {
            if (v != null) {
              field(f.name);
              number(((Number) v).longValue());
            }
          }
          case Field.BOOLEAN -> {
            if (v != null) {
              field(f.name);
              raw((Boolean) v ? TRUE : FALSE);
            }
          }
          case Field.STRING -> string(f.name, (String) v);
          case Field.REPEATED_STRING -> repeated(f.name, (String) v, f.slot);
          case Field.WIRE -> wire(f.name, f.wires, (Enum<?>) v);
          case Field.INSTANT -> instant(f.name, (Instant) v, f.slot);
          default -> {
            if (v != null) {
              field(f.name);
              object(f.fields, v);
            }
          }
        }
      }
      raw((byte) '}');
    }

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

    void repeated(byte[] name, String value, int i) {
      if (value != null) {
        field(name);
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
    final long[] lastSecond = new long[instants];
    final byte[][] lastSecondText = new byte[instants][IsoInstant.SECONDS_LENGTH];

    Out() {
      Arrays.fill(lastSecond, -1);
    }

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
