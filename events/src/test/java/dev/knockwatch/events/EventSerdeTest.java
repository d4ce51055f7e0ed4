package dev.knockwatch.events;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.RecordComponent;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Serde;
import org.junit.jupiter.api.Test;

/** Events as they travel on knockwatch.violations: every field there and back, and a bad value a clear error. */
class EventSerdeTest {

  private final Serde<ViolationEvent> serde = Json.eventSerde();

  @Test
  void everyFieldOfAnEventComesBackAsItWasWritten() throws Exception {
    Random r = new Random(11);
    Set<String> carried = new HashSet<>();
    for (int n = 0; n < 5_000; n++) {
      ViolationEvent e = EventWriterTest.randomEvent(r);
      byte[] bytes = serde.serializer().serialize("t", e);
      assertThat(serde.deserializer().deserialize("t", bytes)).isEqualTo(e);
      for (RecordComponent c : ViolationEvent.class.getRecordComponents()) {
        if (c.getAccessor().invoke(e) != null) {
          carried.add(c.getName());
        }
      }
    }
    // a field added to the event and left out of the random events would go untested
    Set<String> all = new HashSet<>();
    for (RecordComponent c : ViolationEvent.class.getRecordComponents()) {
      all.add(c.getName());
    }
    assertThat(carried).isEqualTo(all);
  }

  @Test
  void aValueThatIsNotAnEventIsASerializationErrorNamingTheTopic() {
    for (String bad : new String[] {"{\"host\":", "[]", "{\"source\":{\"a\":1}}", "{\"origin\":{\"offset\":99999999999999999999999}}",
        "{\"role\":{}}", "\u0000\uFFFD"}) {
      assertThatThrownBy(() -> serde.deserializer().deserialize("knockwatch.violations", bad.getBytes(StandardCharsets.UTF_8)))
          .as(bad).isInstanceOf(SerializationException.class).hasMessageContaining("knockwatch.violations");
    }
    assertThat(serde.deserializer().deserialize("t", null)).isNull();
  }
}
