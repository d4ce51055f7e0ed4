package dev.knockwatch.events;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The streaming writer must write what the mapper writes, for any event: the same bytes, except
 * that a character beyond U+FFFF is written as its four UTF-8 bytes where the
 * mapper escapes its two surrogates (the same JSON string either way).
 */
class EventWriterTest {

  /** Absent, or one of three values: runs of equal values exercise the writer's last-value encodings. */
  private static String maybe(Random r, String s) {
    return r.nextInt(3) == 0 ? null : s + r.nextInt(3);
  }

  private static <E extends Enum<E>> E maybe(Random r, Class<E> type) {
    E[] values = type.getEnumConstants();
    return r.nextInt(4) == 0 ? null : values[r.nextInt(values.length)];
  }

  /** An event with every field absent or one of a few values, hostile text included. */
  static ViolationEvent randomEvent(Random r) {
    String hostile = "\"quote\\ back\u0001ctl\u2028sep é 😀 </script> ";
    return ViolationEvent.builder()
        .eventId(maybe(r, "e")).commandId(maybe(r, "xhfHytmXL-L6RsYw2CrSjA")).agentId(maybe(r, hostile))
        .role(maybe(r, "ci")).source(maybe(r, "squid")).kind(maybe(r, Kind.class)).action(maybe(r, "connect"))
        .host(maybe(r, "example.com")).port(r.nextBoolean() ? null : r.nextInt(65536)).method(maybe(r, "GET"))
        .url(maybe(r, "http://h/?q=" + hostile)).targetUnknown(r.nextBoolean() ? null : Boolean.TRUE).path(maybe(r, "/root/.ssh/é\n😀")).newPath(maybe(r, "/w/.git/config" + hostile))
        .rawPath(maybe(r, "/root/./.ssh//é")).rawNewPath(maybe(r, ".git/./config")).addressClass(maybe(r, AddressClass.class))
        .reason(maybe(r, hostile)).proxyError(maybe(r, "blocked-by-allowlist")).errno(maybe(r, "EPERM\u007f\t"))
        .syscall(maybe(r, "openat")).pid(r.nextBoolean() ? null : r.nextInt())
        .observedAt(r.nextInt(5) == 0 ? null : Instant.ofEpochSecond(r.nextInt(2_000_000_000), r.nextInt(1_000_000_000)))
        .ingestedAt(r.nextInt(5) == 0 ? null : Instant.ofEpochMilli(r.nextLong() >>> 24))
        .timeSource(maybe(r, ViolationEvent.TIME_FROM_INGEST)).commandText(maybe(r, hostile))
        .origin(r.nextInt(4) == 0 ? null : new ViolationEvent.Origin(maybe(r, "ci/x.violations.jsonl"), r.nextLong() >>> 1,
            maybe(r, "host")))
        .probe(r.nextInt(3) != 0 ? null : new ViolationEvent.ProbeResult(maybe(r, "plain-http"), maybe(r, "403"),
            maybe(r, hostile), r.nextBoolean()))
        .identityConflict(r.nextInt(3) != 0 ? null : new ViolationEvent.IdentityClaim(maybe(r, hostile),
            maybe(r, "../../x")))
        .unattributed(r.nextInt(3) != 0 ? null : new ViolationEvent.Unattributed(maybe(r, "bad-agent-id"), maybe(r, hostile),
            maybe(r, "uid=" + hostile)))
        .sessionId(maybe(r, "3910808c-131a-4082-8590-281847ea4a47"))
        .taskId(maybe(r, hostile))
        .commandUnknown(r.nextBoolean() ? null : Boolean.TRUE)
        .subject(r.nextInt(3) != 0 ? null : new ViolationEvent.Subject(maybe(r, "netfilter"), maybe(r, "uid=" + hostile)))
        .protocol(maybe(r, "tcp")).sourceAddress(maybe(r, "10.0.3.7" + hostile)).sourcePort(r.nextBoolean() ? null : r.nextInt(65536))
        .enforced(r.nextInt(3) != 0 ? null : Boolean.FALSE)
        .producer(r.nextInt(3) != 0 ? null : "{\"class_uid\":4001,\"message\":\"" + hostile.replace("\\", "").replace("\"", "") + "\"}")
        .evidence(maybe(r, ViolationEvent.EVIDENCE_SANDBOX))
        .build();
  }

  @Test
  void randomEventsAreWrittenByteForByteAsTheMapperWritesThem() throws Exception {
    Random r = new Random(11);
    for (int n = 0; n < 5_000; n++) {
      ViolationEvent e = randomEvent(r);
      String ours = new String(EventWriter.toBytes(e), java.nio.charset.StandardCharsets.UTF_8);
      String mappers = new String(Json.MAPPER.writeValueAsBytes(e), java.nio.charset.StandardCharsets.UTF_8);
      assertThat(Json.MAPPER.readTree(ours)).as(ours).isEqualTo(Json.MAPPER.readTree(mappers));
      assertThat(Json.read(ours, ViolationEvent.class)).isEqualTo(e);
      if (!mappers.contains("\\uD83D")) {
        assertThat(ours).isEqualTo(mappers);
      }
    }
  }

  /**
   * The writer keeps each instant field's last second as text: events of one batch share
   * seconds, in either field, and a second may come back after another, or after one the JDK
   * writes (before 1970).
   */
  @Test
  void instantsSharingSecondsAreWrittenAsTheMapperWritesThem() throws Exception {
    Random r = new Random(5);
    long[] seconds = {1_795_978_485L, 1_795_978_486L, 0L, -1L, 253_402_300_799L, 253_402_300_800L};
    for (int n = 0; n < 5_000; n++) {
      Instant observed = Instant.ofEpochSecond(seconds[r.nextInt(seconds.length)],
          r.nextInt(3) == 0 ? 0 : r.nextInt(3) == 0 ? 1_000_000L * r.nextInt(1000) : r.nextInt(1_000_000_000));
      Instant ingested = Instant.ofEpochSecond(seconds[r.nextInt(2)], r.nextInt(1_000_000_000));
      ViolationEvent e = ViolationEvent.builder().eventId("e" + n).commandId("xhfHytmXL-L6RsYw2CrSjA")
          .source("srt-violation").observedAt(observed).ingestedAt(r.nextBoolean() ? ingested : observed).build();
      assertThat(new String(EventWriter.toBytes(e), java.nio.charset.StandardCharsets.UTF_8))
          .isEqualTo(new String(Json.MAPPER.writeValueAsBytes(e), java.nio.charset.StandardCharsets.UTF_8));
    }
  }

  @Test
  void theWordAtATimeScanFindsEveryByteToEscapeAtEveryPlace() {
    Random r = new Random(5);
    byte[] specials = {0, 0x1f, 0x20, '"', '\\', 0x7f, (byte) 0x80, (byte) 0xc3, (byte) 0xff, '!', '#', '[', ']', 'a'};
    for (int n = 0; n < 200_000; n++) {
      byte[] b = new byte[r.nextInt(40)];
      for (int i = 0; i < b.length; i++) {
        b[i] = (byte) (0x21 + r.nextInt(0x5e)); // printable, maybe '"' or '\\'
      }
      if (b.length > 0 && r.nextBoolean()) {
        b[r.nextInt(b.length)] = specials[r.nextInt(specials.length)];
      }
      boolean expected = true;
      for (byte c : b) {
        expected &= c >= 0x20 && c <= 0x7f && c != '"' && c != '\\';
      }
      assertThat(EventWriter.plain(b)).as(java.util.Arrays.toString(b)).isEqualTo(expected);
    }
  }
}
