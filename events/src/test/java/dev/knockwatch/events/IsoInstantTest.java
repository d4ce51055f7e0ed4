package dev.knockwatch.events;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class IsoInstantTest {

  @ParameterizedTest
  @ValueSource(strings = {"1970-01-01T00:00:00Z", "2026-11-29T21:57:57Z", "2024-02-29T23:59:59.999Z",
      "2000-03-01T00:00:00.000001Z", "2100-02-28T12:00:00.123456789Z", "9999-12-31T23:59:59.100Z",
      "1969-12-31T23:59:59.5Z", "+10000-01-01T00:00:00Z", "0001-01-01T00:00:00Z",
      "+1000000000-12-31T23:59:59.999999999Z", "-1000000000-01-01T00:00:00Z"})
  void writesWhatInstantToStringWrites(String text) {
    Instant t = Instant.parse(text);
    assertThat(IsoInstant.format(t)).isEqualTo(t.toString());
  }

  @Test
  void agreesWithTheJdkOnRandomInstants() {
    SplittableRandom random = new SplittableRandom(7);
    for (int i = 0; i < 200_000; i++) {
      long sec = random.nextLong(-100_000_000_000L, 300_000_000_000L);
      int nano = switch (i % 4) {
        case 0 -> 0;
        case 1 -> random.nextInt(1000) * 1_000_000;
        case 2 -> random.nextInt(1_000_000) * 1000;
        default -> random.nextInt(1_000_000_000);
      };
      Instant t = Instant.ofEpochSecond(sec, nano);
      assertThat(IsoInstant.format(t)).as("%s", t).isEqualTo(t.toString());
    }
  }

  @Test
  void readsBackWhatItWritesOnRandomInstants() {
    SplittableRandom random = new SplittableRandom(11);
    for (int i = 0; i < 200_000; i++) {
      Instant t = Instant.ofEpochSecond(random.nextLong(0, 253_402_300_800L), i % 2 == 0 ? 0 : random.nextInt(1_000_000_000));
      assertThat(IsoInstant.parse(IsoInstant.format(t))).as("%s", t).isEqualTo(t);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"2026-11-29T18:45:32.887Z", "2026-11-29T18:45:32Z", "2026-11-29T18:45:32.5Z",
      "2024-02-29T00:00:00.000000001Z", "2026-11-29T18:45:32+02:00", "1969-12-31T23:59:59Z", "+10000-01-01T00:00:00Z",
      "2026-11-29T24:00:00Z", "2026-11-29T18:45:32.Z"})
  void readsWhatInstantParseReads(String text) {
    assertThat(IsoInstant.parse(text)).isEqualTo(Instant.parse(text));
  }

  @ParameterizedTest
  @ValueSource(strings = {"2026-02-30T00:00:00Z", "2026-13-01T00:00:00Z", "2026-11-29T18:61:00Z",
      "2026-11-29 18:45:32Z", "yesterday"})
  void refusesWhatInstantParseRefuses(String text) {
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> IsoInstant.parse(text))
        .isInstanceOf(java.time.format.DateTimeParseException.class);
  }

  @Test
  void theMapperReadsInstantsBackAndSaysWhatIsWrong() {
    assertThat(Json.read("\"2026-11-29T21:57:57.120Z\"", Instant.class)).isEqualTo(Instant.parse("2026-11-29T21:57:57.120Z"));
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> Json.read("\"not a time\"", Instant.class))
        .hasMessageContaining("not an ISO-8601 instant");
  }

  @Test
  void isWhatTheMapperWrites() {
    Instant t = Instant.parse("2026-11-29T21:57:57.120Z");
    assertThat(Json.write(t)).isEqualTo("\"2026-11-29T21:57:57.120Z\"");
  }

  /**
   * The twin test: the fast reader and the JDK's on the same garbled text must agree, value for
   * value or refusal for refusal. A non-digit hour once read as -1 and moved the time an hour back.
   */
  @Test
  void onGarbledTextTheFastReaderAndTheJdkGiveOneAnswer() {
    java.util.Random random = new java.util.Random(23);
    String alphabet = "0123456789-:TZ.x+ \u0661";
    java.util.List<String> from = java.util.List.of("2026-11-29T18:45:32.887Z", "2026-11-29T18:45:32Z",
        "2024-02-29T23:59:59.999999999Z", "1970-01-01T00:00:00Z", "9999-12-31T23:59:59Z");
    java.util.List<String> cases = new java.util.ArrayList<>(java.util.List.of("2026-11-29Tx1:45:32Z",
        "2026-11-29T-1:45:32Z", "2026-11-29T1-:45:32Z", "2026-1x-29T18:45:32Z", "2026-11-29T18:45:-2Z",
        "2026-11-29T18:-5:32Z", "-026-11-29T18:45:32Z", "2026-11-29T18:45:32.-87Z", "2026-11-29T18:45:32.8x7Z"));
    for (int n = 0; n < 50_000; n++) {
      StringBuilder t = new StringBuilder(from.get(random.nextInt(from.size())));
      for (int k = 1 + random.nextInt(2); k > 0; k--) {
        t.setCharAt(random.nextInt(t.length()), alphabet.charAt(random.nextInt(alphabet.length())));
      }
      cases.add(t.toString());
    }
    for (String t : cases) {
      Instant jdk;
      try {
        jdk = Instant.parse(t);
      } catch (java.time.format.DateTimeParseException e) {
        jdk = null;
      }
      Instant fast;
      try {
        fast = IsoInstant.parse(t);
      } catch (java.time.format.DateTimeParseException e) {
        fast = null;
      }
      assertThat(fast).as(t).isEqualTo(jdk);
    }
  }
}
