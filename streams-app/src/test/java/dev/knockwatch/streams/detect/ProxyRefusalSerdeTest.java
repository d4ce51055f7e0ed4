package dev.knockwatch.streams.detect;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.knockwatch.events.Json;
import dev.knockwatch.streams.detect.BypassDetector.ProxyRefusal;
import org.apache.kafka.common.errors.SerializationException;
import org.junit.jupiter.api.Test;

class ProxyRefusalSerdeTest {

  private final ProxyRefusalSerde serde = new ProxyRefusalSerde();

  private ProxyRefusal roundTrip(ProxyRefusal r) {
    return serde.deserializer().deserialize("t", serde.serializer().serialize("t", r));
  }

  @Test
  void everyValueReadsBackAsItWasWritten() {
    for (ProxyRefusal r : new ProxyRefusal[] {
        new ProxyRefusal(1_764_441_932_887L, "registry.npmjs.org", 443),
        new ProxyRefusal(-5, "xn--bcher-kva.example", null),
        new ProxyRefusal(0, null, 0),
        new ProxyRefusal(Long.MAX_VALUE, "é😀\"\u0000" + "h".repeat(70_000), 65_535)}) {
      assertThat(roundTrip(r)).isEqualTo(r);
    }
    assertThat(serde.serializer().serialize("t", null)).isNull();
    assertThat(serde.deserializer().deserialize("t", null)).isNull();
  }

  @Test
  void aValueAnEarlierVersionWroteAsJsonIsStillRead() {
    ProxyRefusal r = new ProxyRefusal(1_764_441_932_887L, "evil.example", 80);
    assertThat(serde.deserializer().deserialize("t", Json.serde(ProxyRefusal.class).serializer().serialize("t", r)))
        .isEqualTo(r);
    assertThat(serde.serializer().serialize("t", r)[0]).isEqualTo(ProxyRefusalSerde.VERSION);
  }

  @Test
  void bytesOfAnotherFormatAreAClearError() {
    assertThatThrownBy(() -> serde.deserializer().deserialize("t", new byte[] {9, 1, 2}))
        .isInstanceOf(SerializationException.class).hasMessage("not a proxy refusal value (3 bytes)");
    assertThatThrownBy(() -> serde.deserializer().deserialize("t", new byte[] {1, 1, 2}))
        .isInstanceOf(SerializationException.class).hasMessage("not a proxy refusal value (3 bytes)");
    assertThatThrownBy(() -> serde.deserializer().deserialize("t", new byte[0]))
        .isInstanceOf(SerializationException.class).hasMessage("not a proxy refusal value (0 bytes)");
    byte[] hostPastTheEnd = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0, 0, 0, 'h', 0, 0, 0, 0};
    assertThatThrownBy(() -> serde.deserializer().deserialize("t", hostPastTheEnd))
        .isInstanceOf(SerializationException.class).hasMessage("not a proxy refusal value (18 bytes)");
  }
}
