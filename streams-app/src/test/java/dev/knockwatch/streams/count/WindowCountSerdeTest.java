package dev.knockwatch.streams.count;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.knockwatch.events.Json;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.kafka.common.errors.SerializationException;
import org.junit.jupiter.api.Test;

class WindowCountSerdeTest {

  private final WindowCountSerde serde = new WindowCountSerde();

  private static String text(Random r) {
    String[] pieces = {"example.com:443", "/home/agent/.ssh/id_ed25519", "é", "😀", "\"", "\u0000", "ci-runner-7", ""};
    StringBuilder sb = new StringBuilder();
    for (int i = r.nextInt(4); i >= 0; i--) {
      sb.append(pieces[r.nextInt(pieces.length)]);
    }
    return sb.toString();
  }

  static WindowCount random(Random r) {
    List<String> samples = null;
    if (r.nextInt(5) > 0) {
      samples = new ArrayList<>();
      for (int i = r.nextInt(6); i > 0; i--) {
        samples.add(text(r));
      }
      samples = List.copyOf(samples);
    }
    Map<String, Long> targets = null;
    if (r.nextInt(5) > 0) {
      targets = new LinkedHashMap<>();
      for (int i = r.nextInt(22); i > 0; i--) {
        targets.put(text(r) + i, r.nextLong());
      }
    }
    return new WindowCount(r.nextLong(),
        r.nextInt(6) == 0 ? null : Instant.ofEpochSecond(r.nextInt(2_000_000_000), r.nextInt(1_000_000_000)),
        r.nextInt(6) == 0 ? null : Instant.ofEpochMilli(r.nextLong() >>> 24),
        r.nextInt(4) == 0 ? null : text(r), r.nextInt(4) == 0 ? null : text(r), samples, targets);
  }

  @Test
  void everyValueReadsBackEqualTargetsInTheirOrder() {
    Random r = new Random(3);
    for (int n = 0; n < 20_000; n++) {
      WindowCount c = random(r);
      WindowCount back = serde.deserializer().deserialize("t", serde.serializer().serialize("t", c));
      assertThat(back).isEqualTo(c);
      if (c.targets() != null) {
        assertThat(back.targets().keySet()).containsExactlyElementsOf(c.targets().keySet());
      }
    }
  }

  @Test
  void aValueWrittenAsJsonByAnEarlierVersionIsStillRead() throws Exception {
    Random r = new Random(4);
    for (int n = 0; n < 2_000; n++) {
      WindowCount c = random(r);
      byte[] json = Json.MAPPER.writeValueAsBytes(c);
      assertThat(serde.deserializer().deserialize("t", json)).isEqualTo(c);
    }
  }

  @Test
  void theBinaryFormIsSmallerThanTheJson() throws Exception {
    WindowCount c = new WindowCount(7, Instant.parse("2026-11-30T07:00:00.123Z"), Instant.parse("2026-11-30T07:00:04.5Z"),
        "ci-runner-7", "evil.example:443", List.of("9f12633ad59a1e0d0000000000000000"), Map.of("evil.example:443", 7L));
    assertThat(serde.serializer().serialize("t", c).length).isLessThan(Json.MAPPER.writeValueAsBytes(c).length);
  }

  @Test
  void aValueTheFirstBinaryVersionWroteStillReads() throws Exception {
    // version 1: each string a present flag, then modified UTF-8
    java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
    try (java.io.DataOutputStream out = new java.io.DataOutputStream(bytes)) {
      out.writeByte(1);
      out.writeLong(7);
      out.writeBoolean(true);
      out.writeLong(1_764_486_000L);
      out.writeInt(123_000_000);
      out.writeBoolean(false);
      out.writeBoolean(true);
      out.writeUTF("ci-runner-7");
      out.writeBoolean(true);
      out.writeUTF("evil.example:443");
      out.writeInt(1);
      out.writeBoolean(true);
      out.writeUTF("9f12633ad59a1e0d0000000000000000");
      out.writeInt(1);
      out.writeBoolean(true);
      out.writeUTF("evil.example:443");
      out.writeLong(7);
    }
    assertThat(serde.deserializer().deserialize("t", bytes.toByteArray())).isEqualTo(new WindowCount(7,
        Instant.parse("2025-11-30T07:00:00.123Z"), null, "ci-runner-7", "evil.example:443",
        List.of("9f12633ad59a1e0d0000000000000000"), Map.of("evil.example:443", 7L)));
  }

  @Test
  void bytesOfAnotherShapeAreAClearError() {
    assertThatThrownBy(() -> serde.deserializer().deserialize("t", new byte[] {9, 1, 2}))
        .isInstanceOf(SerializationException.class).hasMessageContaining("not a count window value (3 bytes)");
    byte[] valid = serde.serializer().serialize("t", random(new Random(1)));
    byte[] longer = java.util.Arrays.copyOf(valid, valid.length + 1);
    assertThatThrownBy(() -> serde.deserializer().deserialize("t", longer)).isInstanceOf(SerializationException.class);
    assertThat(serde.deserializer().deserialize("t", null)).isNull();
  }
}
