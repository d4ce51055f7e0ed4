package dev.knockwatch.events;

import com.fasterxml.jackson.core.JsonGenerator;
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
    long sec = t.getEpochSecond();
    if (sec < 0 || sec > MAX_FAST_SECOND) {
      return t.toString();
    }
    int nano = t.getNano();
    char[] out = new char[nano == 0 ? 20 : nano % 1_000_000 == 0 ? 24 : nano % 1000 == 0 ? 27 : 30];
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
    digits(out, 0, year, 4);
    out[4] = '-';
    digits(out, 5, month, 2);
    out[7] = '-';
    digits(out, 8, day, 2);
    out[10] = 'T';
    digits(out, 11, secOfDay / 3600, 2);
    out[13] = ':';
    digits(out, 14, secOfDay / 60 % 60, 2);
    out[16] = ':';
    digits(out, 17, secOfDay % 60, 2);
    int i = 19;
    if (nano != 0) {
      out[i++] = '.';
      int width = out.length - 21;
      digits(out, i, nano / pow10(9 - width), width);
      i += width;
    }
    out[i] = 'Z';
    return new String(out);
  }

  private static int pow10(int n) {
    int p = 1;
    for (int k = 0; k < n; k++) {
      p *= 10;
    }
    return p;
  }

  private static void digits(char[] out, int at, int value, int width) {
    for (int k = at + width - 1; k >= at; k--) {
      out[k] = (char) ('0' + value % 10);
      value /= 10;
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
