package dev.knockwatch.events;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.ser.std.StdSerializer;
import java.io.IOException;
import java.time.Instant;

/**
 * {@link Instant#toString()}'s exact text (ISO-8601, UTC, fraction in groups of three digits),
 * written without {@code DateTimeFormatter}: every event carries two instants and formatting
 * them was a tenth of ingest's serialization time. Years outside 1970–9999 take the JDK's path.
 */
public final class IsoInstant {

  private static final long MAX_FAST_SECOND = 253_402_300_799L; // 9999-12-31T23:59:59Z

  private IsoInstant() {}

  public static String format(Instant t) {
    byte[] out = new byte[MAX_LENGTH];
    return new String(out, 0, write(t, out, 0), java.nio.charset.StandardCharsets.US_ASCII);
  }

  /** The longest text {@link #write} writes (the JDK's, for the largest instant). */
  public static final int MAX_LENGTH = Instant.MAX.toString().length();

  /**
   * Writes {@link #format}'s text as ASCII into {@code out} from {@code at}, which must have room
   * for {@link #MAX_LENGTH} bytes; returns where the text ends.
   */
  public static int write(Instant t, byte[] out, int at) {
    long sec = t.getEpochSecond();
    if (!fast(sec)) {
      byte[] text = t.toString().getBytes(java.nio.charset.StandardCharsets.US_ASCII);
      System.arraycopy(text, 0, out, at, text.length);
      return at + text.length;
    }
    writeSeconds(sec, out, at);
    return writeFraction(t.getNano(), out, at + SECONDS_LENGTH);
  }

  /** Length of the text up to the second, {@code 2026-11-29T18:45:32}. */
  public static final int SECONDS_LENGTH = 19;

  /** True when {@link #writeSeconds} writes this second (years 1970–9999). */
  public static boolean fast(long epochSecond) {
    return epochSecond >= 0 && epochSecond <= MAX_FAST_SECOND;
  }

  /** The text up to the second ({@link #SECONDS_LENGTH} bytes) of a {@link #fast} second. */
  public static void writeSeconds(long sec, byte[] out, int at) {
    long days = sec / 86_400;
    int secOfDay = (int) (sec % 86_400);
    // civil date from days since 1970-01-01 (H. Hinnant's algorithm, era of 400 years)
    long z = days + 719_468;
    long era = z / 146_097;
    long doe = z - era * 146_097;
    long yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    long mp = (5 * doy + 2) / 153;
    int day = (int) (doy - (153 * mp + 2) / 5 + 1);
    int month = (int) (mp < 10 ? mp + 3 : mp - 9);
    int year = (int) (yoe + era * 400 + (month <= 2 ? 1 : 0));
    digits(out, at, year, 4);
    out[at + 4] = '-';
    digits(out, at + 5, month, 2);
    out[at + 7] = '-';
    digits(out, at + 8, day, 2);
    out[at + 10] = 'T';
    digits(out, at + 11, secOfDay / 3600, 2);
    out[at + 13] = ':';
    digits(out, at + 14, secOfDay / 60 % 60, 2);
    out[at + 16] = ':';
    digits(out, at + 17, secOfDay % 60, 2);
  }

  /** The rest after the second: the fraction in groups of three digits if any, and 'Z'; returns the end. */
  public static int writeFraction(int nano, byte[] out, int at) {
    int i = at;
    if (nano != 0) {
      int width = nano % 1_000_000 == 0 ? 3 : nano % 1000 == 0 ? 6 : 9;
      out[i++] = '.';
      digits(out, i, nano / pow10(9 - width), width);
      i += width;
    }
    out[i] = 'Z';
    return i + 1;
  }

  /**
   * Reads what {@link #format} writes ({@code 2026-11-29T18:45:32.887Z}, fraction of 0 to 9
   * digits) without {@code DateTimeFormatter}; any other shape goes to {@link Instant#parse}.
   */
  public static Instant parse(String t) {
    int n = t.length();
    if (n >= 20 && n <= 30 && t.charAt(4) == '-' && t.charAt(7) == '-' && t.charAt(10) == 'T'
        && t.charAt(13) == ':' && t.charAt(16) == ':' && t.charAt(n - 1) == 'Z'
        && (n == 20 || t.charAt(19) == '.')) {
      int year = num(t, 0, 4);
      int month = num(t, 5, 2);
      int day = num(t, 8, 2);
      int hour = num(t, 11, 2);
      int minute = num(t, 14, 2);
      int second = num(t, 17, 2);
      int fracDigits = n == 20 ? 0 : n - 21;
      int frac = fracDigits == 0 ? 0 : num(t, 20, fracDigits);
      // num() is -1 for a field that holds a non-digit: every field is checked from below too
      if (year >= 1970 && month >= 1 && month <= 12 && day >= 1 && day <= daysIn(year, month) && hour >= 0 && hour < 24
          && minute >= 0 && minute < 60 && second >= 0 && second < 60 && frac >= 0 && (n == 20 || fracDigits > 0)) {
        long days = daysFromCivil(year, month, day);
        return Instant.ofEpochSecond(days * 86_400 + hour * 3600L + minute * 60L + second,
            (long) frac * pow10(9 - fracDigits));
      }
    }
    return Instant.parse(t);
  }

  /** Digits at {@code from}, or -1 when one is not a digit. */
  private static int num(String s, int from, int len) {
    int v = 0;
    for (int i = from; i < from + len; i++) {
      char c = s.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
      v = v * 10 + (c - '0');
    }
    return v;
  }

  private static int daysIn(int year, int month) {
    return switch (month) {
      case 2 -> (year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)) ? 29 : 28;
      case 4, 6, 9, 11 -> 30;
      default -> 31;
    };
  }

  /** Days since 1970-01-01 of a civil date (H. Hinnant's algorithm). */
  private static long daysFromCivil(int year, int month, int day) {
    long y = month <= 2 ? year - 1 : year;
    long era = y / 400;
    long yoe = y - era * 400;
    long doy = (153L * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;
    long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146_097 + doe - 719_468;
  }

  private static int pow10(int n) {
    int p = 1;
    for (int k = 0; k < n; k++) {
      p *= 10;
    }
    return p;
  }

  /** "00" to "99": two digits per division. */
  private static final byte[] PAIRS = new byte[200];

  static {
    for (int v = 0; v < 100; v++) {
      PAIRS[2 * v] = (byte) ('0' + v / 10);
      PAIRS[2 * v + 1] = (byte) ('0' + v % 10);
    }
  }

  private static void digits(byte[] out, int at, int value, int width) {
    int k = at + width;
    while (k - at >= 2) {
      int q = value / 100;
      int r = value - q * 100;
      out[--k] = PAIRS[2 * r + 1];
      out[--k] = PAIRS[2 * r];
      value = q;
    }
    if (k > at) {
      out[at] = (byte) ('0' + value % 10);
    }
  }

  /** The Jackson deserializer {@link Json#MAPPER} uses for every {@link Instant} written as text. */
  static final class Deserializer extends com.fasterxml.jackson.databind.deser.std.StdScalarDeserializer<Instant> {
    private final com.fasterxml.jackson.databind.JsonDeserializer<Instant> fallback =
        com.fasterxml.jackson.datatype.jsr310.deser.InstantDeserializer.INSTANT;

    Deserializer() {
      super(Instant.class);
    }

    @Override
    public Instant deserialize(JsonParser p, com.fasterxml.jackson.databind.DeserializationContext ctxt)
        throws IOException {
      if (p.currentToken() == com.fasterxml.jackson.core.JsonToken.VALUE_STRING) {
        String text = p.getText().strip();
        try {
          return parse(text);
        } catch (java.time.format.DateTimeParseException e) {
          return (Instant) ctxt.handleWeirdStringValue(Instant.class, text, "not an ISO-8601 instant: %s", e.getMessage());
        }
      }
      return fallback.deserialize(p, ctxt); // numbers (epoch seconds) and the rest, as the JSR-310 module reads them
    }
  }

  /** The Jackson serializer {@link Json#MAPPER} uses for every {@link Instant}. */
  static final class Serializer extends StdSerializer<Instant> {
    Serializer() {
      super(Instant.class);
    }

    @Override
    public void serialize(Instant value, JsonGenerator gen, SerializerProvider provider) throws IOException {
      gen.writeString(format(value));
    }
  }
}
