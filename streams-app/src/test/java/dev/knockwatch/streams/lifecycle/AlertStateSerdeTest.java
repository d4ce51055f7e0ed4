package dev.knockwatch.streams.lifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.kafka.common.errors.SerializationException;
import org.junit.jupiter.api.Test;

class AlertStateSerdeTest {

  private final AlertStateSerde serde = new AlertStateSerde();

  /** Agent-written text at its worst, as StateStringsTest writes it. */
  private static String text(Random r) {
    String[] pieces = {"evil.example:443", "\ud800", "\udfff", "\u0000", "\u202e", "\u001b[31m", "😀", "<@here>",
        "9f12633ad59a1e0d0000000000e90000", "", "ci-runner-7"};
    StringBuilder sb = new StringBuilder();
    for (int i = r.nextInt(4); i >= 0; i--) {
      sb.append(pieces[r.nextInt(pieces.length)]);
    }
    return r.nextInt(100) == 0 ? sb + "x".repeat(10_000) : sb.toString();
  }

  private static <T> T maybe(Random r, T t) {
    return r.nextInt(5) == 0 ? null : t;
  }

  private static List<String> texts(Random r, int max) {
    List<String> out = new ArrayList<>();
    for (int i = r.nextInt(max + 1); i > 0; i--) {
      out.add(text(r));
    }
    return out;
  }

  private static Map<String, String> textMap(Random r) {
    Map<String, String> m = new LinkedHashMap<>();
    for (int i = r.nextInt(4); i > 0; i--) {
      m.put(text(r) + i, text(r));
    }
    return m;
  }

  static AlertState random(Random r) {
    List<Alert.Target> targets = new ArrayList<>();
    for (int i = r.nextInt(6); i > 0; i--) {
      targets.add(new Alert.Target(text(r), r.nextLong()));
    }
    Alert a = Alert.firing(text(r), text(r)).fingerprint(maybe(r, text(r)))
        .severity(maybe(r, Alert.Severity.values()[r.nextInt(Alert.Severity.values().length)]))
        .status(Alert.Status.values()[r.nextInt(Alert.Status.values().length)])
        .agentId(maybe(r, text(r))).role(maybe(r, text(r))).host(maybe(r, text(r))).port(maybe(r, r.nextInt()))
        .count(r.nextLong())
        .windowStart(maybe(r, Instant.ofEpochSecond(r.nextInt(2_000_000_000), r.nextInt(1_000_000_000))))
        .windowEnd(maybe(r, Instant.ofEpochMilli(r.nextLong() >>> 24)))
        .firstSeen(maybe(r, Instant.ofEpochMilli(r.nextInt())))
        .lastSeen(maybe(r, Instant.ofEpochMilli(r.nextInt())))
        .summary(maybe(r, text(r))).sampleEventIds(maybe(r, List.copyOf(texts(r, 5))))
        .sources(maybe(r, List.of(r.nextBoolean() ? "srt-violation" : "strace", "squid")))
        .policyVersion(maybe(r, text(r))).shadow(maybe(r, r.nextBoolean())).targets(maybe(r, List.copyOf(targets)))
        .distinctTargets(maybe(r, r.nextLong())).lastTarget(maybe(r, text(r)))
        .meta(maybe(r, new Alert.Meta(texts(r, 3), maybe(r, text(r)), textMap(r), textMap(r))))
        .build();
    EpisodeTargets episode = null;
    if (r.nextBoolean()) {
      episode = EpisodeTargets.first(text(r));
      // past the tally's twenty names, the sketch is made too
      for (int i = r.nextInt(3) == 0 ? 40 : r.nextInt(5); i > 0; i--) {
        episode.add(text(r) + i);
      }
    }
    return new AlertState(a, r.nextLong(), r.nextLong(), r.nextBoolean(), r.nextLong(), episode);
  }

  /** The state as JSON, but for the alert's meta, whose maps have no order (the alerts are compared as records). */
  private static String json(AlertState s) throws Exception {
    return Json.MAPPER.writeValueAsString(new AlertState(s.alert().toBuilder().meta(null).build(), s.lastHitMs(),
        s.lastEmittedMs(), s.pending(), s.resolveAfterMs(), s.targets()));
  }

  @Test
  void everyStateReadsBackTheSameHostileTextIncluded() throws Exception {
    Random r = new Random(21);
    for (int n = 0; n < 5_000; n++) {
      AlertState s = random(r);
      AlertState back = serde.deserializer().deserialize("t", serde.serializer().serialize("t", s));
      assertThat(back.alert()).isEqualTo(s.alert());
      assertThat(json(back)).isEqualTo(json(s));
    }
  }

  @Test
  void aStateWrittenAsJsonByAnEarlierVersionIsStillRead() throws Exception {
    Random r = new Random(22);
    int read = 0;
    for (int n = 0; n < 1_000; n++) {
      AlertState s = random(r);
      byte[] old = Json.MAPPER.writeValueAsBytes(s);
      AlertState back;
      try {
        back = serde.deserializer().deserialize("t", old);
      } catch (SerializationException e) {
        // the JSON of earlier versions could not hold a lone surrogate in a map's key (a label, a target): Jackson
        // writes it and cannot read it back. The binary form can (everyStateReadsBackTheSameHostileTextIncluded).
        assertThat(e).hasStackTraceContaining("surrogate");
        continue;
      }
      // as the earlier versions read their own JSON (which need not give back a lone surrogate in a value)
      AlertState before = Json.MAPPER.readValue(old, AlertState.class);
      assertThat(back.alert()).isEqualTo(before.alert());
      assertThat(json(back)).isEqualTo(json(before));
      read++;
    }
    assertThat(read).isGreaterThan(300);
  }

  @Test
  void aTypicalStateIsUnderHalfItsJson() throws Exception {
    Alert a = Alert.firing("off-role-host", "xhfHytmXL-L6RsYw2CrSjA").agentId("ci-runner-1").role("ci")
        .host("example.com").port(80).count(5).firstSeen(Instant.parse("2026-11-29T18:45:32.887Z"))
        .lastSeen(Instant.parse("2026-11-29T18:46:52.887Z"))
        .summary("agent ci-runner-1 (role ci) tried example.com:80, which its role does not allow")
        .sampleEventIds(List.of("38e15413168e4dbc0000000000000000", "38e15413168e4dbc0000000000e90000",
            "38e15413168e4dbc0000000001d20000", "38e15413168e4dbc0000000002bb0000", "38e15413168e4dbc0000000003a40000"))
        .sources(List.of("srt-violation")).policyVersion("90eb75a986ba")
        .targets(List.of(new Alert.Target("example.com:80", 5))).distinctTargets(1L).lastTarget("example.com:80")
        .build();
    AlertState s = new AlertState(a, 1_764_441_932_887L, 1_764_441_932_887L, true, 600_000,
        EpisodeTargets.first("example.com:80"));
    assertThat(serde.serializer().serialize("t", s).length).isLessThan(Json.MAPPER.writeValueAsBytes(s).length / 2);
  }

  @Test
  void bytesOfAnotherShapeAreAClearError() {
    assertThatThrownBy(() -> serde.deserializer().deserialize("t", new byte[] {9, 1, 2}))
        .isInstanceOf(SerializationException.class).hasMessageContaining("not a firing alert value (3 bytes)");
    Random r = new Random(23);
    for (int n = 0; n < 2_000; n++) {
      byte[] valid = serde.serializer().serialize("t", random(r));
      byte[] cut = java.util.Arrays.copyOf(valid, r.nextInt(valid.length));
      if (cut.length > 0 && cut[0] == '{') {
        continue;
      }
      assertThatThrownBy(() -> serde.deserializer().deserialize("t", cut)).isInstanceOf(SerializationException.class);
    }
    assertThat(serde.deserializer().deserialize("t", null)).isNull();
  }
}
