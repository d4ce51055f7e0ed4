package dev.knockwatch.events;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.core.JsonProcessingException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The streaming reader must read what the mapper reads, for any input: the same event, or the same failure. */
class EventReaderTest {

  private static String maybe(Random r, String s) {
    return r.nextInt(3) == 0 ? null : s + r.nextInt(3);
  }

  private static <E extends Enum<E>> E maybe(Random r, Class<E> type) {
    E[] values = type.getEnumConstants();
    return r.nextInt(4) == 0 ? null : values[r.nextInt(values.length)];
  }

  private static ViolationEvent random(Random r) {
    String hostile = "\"quote\\ back\u0001ctl\u2028sep é 😀 </script> ";
    return ViolationEvent.builder()
        .eventId(maybe(r, "e")).commandId(maybe(r, "xhfHytmXL-L6RsYw2CrSjA")).agentId(maybe(r, hostile))
        .role(maybe(r, "ci")).source(maybe(r, Source.class)).kind(maybe(r, Kind.class)).action(maybe(r, "connect"))
        .host(maybe(r, "example.com")).port(r.nextBoolean() ? null : r.nextInt(65536)).method(maybe(r, "GET"))
        .url(maybe(r, "http://h/?q=" + hostile)).path(maybe(r, "/root/.ssh/é\n😀")).addressClass(maybe(r, AddressClass.class))
        .reason(maybe(r, hostile)).proxyError(maybe(r, "blocked-by-allowlist")).errno(maybe(r, "EPERM"))
        .syscall(maybe(r, "openat")).pid(r.nextBoolean() ? null : r.nextInt())
        .observedAt(r.nextInt(5) == 0 ? null : Instant.ofEpochSecond(r.nextInt(2_000_000_000), r.nextInt(1_000_000_000)))
        .ingestedAt(r.nextInt(5) == 0 ? null : Instant.ofEpochMilli(r.nextLong() >>> 24))
        .commandText(maybe(r, hostile))
        .origin(r.nextInt(4) == 0 ? null : new ViolationEvent.Origin(maybe(r, "ci/x.violations.jsonl"), r.nextLong() >>> 1,
            maybe(r, "host")))
        .probe(r.nextInt(3) != 0 ? null : new ViolationEvent.ProbeResult(maybe(r, "plain-http"), maybe(r, "403"),
            maybe(r, hostile), r.nextBoolean()))
        .build();
  }

  /** The reader's value, or the class and message of its failure, beside the mapper's. */
  private static void sameAsTheMapper(String json) {
    byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
    Object mappers;
    try {
      mappers = Json.MAPPER.readValue(bytes, ViolationEvent.class);
    } catch (Exception e) {
      mappers = e.getClass().getName() + ": " + e.getMessage();
    }
    Object ours;
    try {
      ours = EventReader.read(bytes);
    } catch (Exception e) {
      ours = e.getClass().getName() + ": " + e.getMessage();
    }
    assertThat(ours).as(json).isEqualTo(mappers);
  }

  @Test
  void whatTheWriterWritesIsReadBackAsTheMapperReadsIt() throws Exception {
    Random r = new Random(7);
    for (int n = 0; n < 5_000; n++) {
      ViolationEvent e = random(r);
      byte[] written = EventWriter.toBytes(e);
      assertThat(EventReader.fast(written)).as("read without the mapper").isEqualTo(e);
      assertThat(EventReader.read(written)).isEqualTo(e);
      sameAsTheMapper(new String(Json.MAPPER.writeValueAsBytes(e), StandardCharsets.UTF_8));
    }
  }

  @Test
  void otherShapesGiveTheMappersValueOrItsError() {
    String[] cases = {
      "{\"schema\":1,\"commandId\":\"xhfHytmXL-L6RsYw2CrSjA\",\"port\":\"443\"}", // a number as a string: coerced
      "{\"schema\":\"1\",\"pid\":12.0}",
      "{\"source\":\"nope\"}", // an unknown enum value: an error
      "{\"source\":\"SQUID\"}",
      "{\"kind\":null,\"host\":null,\"port\":null,\"origin\":null,\"probe\":null}",
      "{\"host\":\"a\",\"host\":\"b\"}", // a field twice
      "{\"unknown\":{\"nested\":[1,{\"x\":2}]},\"extra\":[],\"host\":\"h\",\"more\":true}",
      "{\"origin\":{\"file\":\"f\",\"offset\":\"12\",\"other\":{}},\"probe\":{\"refused\":\"true\"}}",
      "{\"origin\":{\"offset\":99999999999999999999999}}",
      "{\"origin\":{\"offset\":4294967296},\"pid\":4294967296}", // a long where an int goes: an error
      "{\"observedAt\":\" 2026-11-29T18:45:32.887Z \",\"ingestedAt\":\"2026-11-29T18:45:32+01:00\"}",
      "{\"observedAt\":\"yesterday\"}",
      "{\"observedAt\":1764441932.5}", // epoch seconds, as the JSR-310 module reads them
      "{\"host\":\"h\",\"port\":443", // cut short
      "{\"host\":\"h\"} trailing",
      "[]",
      "null",
      "",
      "{\"probe\":{\"name\":\"n\",\"refused\":true,\"refused\":false}}",
      "{\"host\":443,\"agentId\":true,\"role\":{}}", // scalars where strings go: coerced; an object: an error
      "{\"commandText\":\"\\u0000\\ud83d\\ude00\\\"\",\"schema\":2}",
    };
    for (String json : cases) {
      sameAsTheMapper(json);
    }
  }

  @Test
  void malformedJsonIsTheMappersError() {
    assertThatThrownBy(() -> EventReader.read("{\"host\":".getBytes(StandardCharsets.UTF_8)))
        .isInstanceOf(JsonProcessingException.class);
  }
}
