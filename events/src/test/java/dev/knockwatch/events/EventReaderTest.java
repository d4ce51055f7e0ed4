package dev.knockwatch.events;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.core.JsonProcessingException;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The streaming reader must read what the mapper reads, for any input: the same event, or the same failure. */
class EventReaderTest {

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
      ViolationEvent e = EventWriterTest.randomEvent(r);
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
      "{\"host\":\"a\",\"host\":\"b\"}", // a field twice: the last one
      "{\"schema\":1,\"eventId\":\"e\",\"commandId\":\"c\",\"agentId\":\"a\",\"role\":\"r\",\"source\":\"squid\","
          + "\"kind\":\"network\",\"action\":\"x\",\"host\":\"h\",\"port\":1,\"method\":\"m\",\"url\":\"u\",\"path\":\"p\","
          + "\"addressClass\":\"public\",\"reason\":\"z\",\"proxyError\":\"e\",\"errno\":\"E\",\"syscall\":\"s\",\"pid\":2,"
          + "\"observedAt\":\"2026-11-29T18:45:32.887Z\",\"ingestedAt\":\"2026-11-29T18:45:32.887Z\",\"commandText\":\"t\","
          + "\"origin\":null,\"probe\":null,\"host\":\"again\"}", // twice after every field: the mapper's error
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
