package dev.knockwatch.streams.count;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.knockwatch.streams.state.StateStrings;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.kafka.common.errors.SerializationException;
import org.junit.jupiter.api.Test;

class RecentRefusalsSerdeTest {

  private final RecentRefusalsSerde serde = new RecentRefusalsSerde();

  private static final long[] EDGES = {0, -1, 1, Long.MIN_VALUE, Long.MAX_VALUE, 1_764_441_932_887L};

  private static RecentRefusals random(Random r) {
    List<RecentRefusals.Sighting> recent = new ArrayList<>();
    long at = r.nextBoolean() ? EDGES[r.nextInt(EDGES.length)] : r.nextLong();
    for (int i = r.nextInt(12); i > 0; i--) {
      // mostly a few ms apart, as sightings are; sometimes any long at all
      at = r.nextInt(8) == 0 ? EDGES[r.nextInt(EDGES.length)] : r.nextInt(8) == 0 ? r.nextLong() : at + r.nextInt(5000);
      recent.add(new RecentRefusals.Sighting(at, hostile(r), r.nextInt(5) == 0 ? null : hostile(r),
          r.nextInt(5) == 0 ? null : "ci-runner-" + r.nextInt(3)));
    }
    return new RecentRefusals(List.copyOf(recent), r.nextBoolean() ? null : WindowCountSerdeTest.random(r));
  }

  /** Hostile text, within what a state value keeps of a string. */
  private static String hostile(Random r) {
    String s = dev.knockwatch.streams.state.StateStringsTest.hostile(r);
    return s.length() > StateStrings.MAX_CHARS ? s.substring(0, StateStrings.MAX_CHARS) : s;
  }

  @Test
  void everyValueReadsBackEqualHostileTextAndExtremeTimesIncluded() {
    Random r = new Random(31);
    for (int n = 0; n < 10_000; n++) {
      RecentRefusals v = random(r);
      assertThat(serde.deserializer().deserialize("t", serde.serializer().serialize("t", v))).isEqualTo(v);
    }
  }

  @Test
  void aValueTheFirstBinaryVersionWroteStillReads() throws Exception {
    // version 1: fixed-width numbers, each string a present flag then modified UTF-8, the episode a version-1 count
    ByteArrayOutputStream episode = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(episode)) {
      out.writeByte(1);
      out.writeLong(5);
      out.writeBoolean(false);
      out.writeBoolean(false);
      out.writeBoolean(true);
      out.writeUTF("ci-runner-7");
      out.writeBoolean(false);
      out.writeInt(-1);
      out.writeInt(0);
    }
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeByte(1);
      out.writeInt(2);
      out.writeLong(1_764_441_932_887L);
      out.writeBoolean(true);
      out.writeUTF("9f12633ad59a1e0d0000000000000000");
      out.writeBoolean(true);
      out.writeUTF("evil.example:443");
      out.writeBoolean(true);
      out.writeUTF("ci-runner-7");
      out.writeLong(1_764_441_933_000L);
      out.writeBoolean(true);
      out.writeUTF("9f12633ad59a1e0d0000000000e90000");
      out.writeBoolean(false);
      out.writeBoolean(true);
      out.writeUTF("ci-runner-7");
      out.writeBoolean(true);
      out.writeInt(episode.size());
      out.write(episode.toByteArray());
    }
    assertThat(serde.deserializer().deserialize("t", bytes.toByteArray())).isEqualTo(new RecentRefusals(List.of(
        new RecentRefusals.Sighting(1_764_441_932_887L, "9f12633ad59a1e0d0000000000000000", "evil.example:443", "ci-runner-7"),
        new RecentRefusals.Sighting(1_764_441_933_000L, "9f12633ad59a1e0d0000000000e90000", null, "ci-runner-7")),
        new WindowCount(5, null, null, "ci-runner-7", null, null, Map.of())));
  }

  @Test
  void aRetryStormsSightingsTakeAFewBytesEach() {
    List<RecentRefusals.Sighting> recent = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      recent.add(new RecentRefusals.Sighting(1_764_441_932_887L + 250L * i,
          String.format("9f12633ad59a1e0d%016x", 233L << 16 | i), "evil.example:443", "ci-runner-7"));
    }
    byte[] five = serde.serializer().serialize("t", new RecentRefusals(List.copyOf(recent), null));
    byte[] one = serde.serializer().serialize("t", new RecentRefusals(List.of(recent.get(0)), null));
    // each further sighting: its step in time (2 bytes), its id (17), its host and agent again (2 each)
    assertThat((five.length - one.length) / 4).isEqualTo(2 + 17 + 2 + 2);
  }

  @Test
  void damagedBytesAreAClearError() {
    Random r = new Random(32);
    for (int n = 0; n < 3_000; n++) {
      byte[] valid = serde.serializer().serialize("t", random(r));
      byte[] cut = java.util.Arrays.copyOf(valid, 1 + r.nextInt(valid.length - 1));
      assertThatThrownBy(() -> serde.deserializer().deserialize("t", cut)).isInstanceOf(SerializationException.class);
    }
  }
}
