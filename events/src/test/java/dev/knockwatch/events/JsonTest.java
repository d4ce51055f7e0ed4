package dev.knockwatch.events;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Serde;
import org.junit.jupiter.api.Test;

class JsonTest {

  private static final Instant T0 = Instant.parse("2026-11-29T18:45:32.887Z");

  static ViolationEvent event() {
    return ViolationEvent.builder()
        .eventId("0fca5e915d66332ec62055ef63a14398")
        .commandId("xhfHytmXL-L6RsYw2CrSjA")
        .agentId("ci-runner-1")
        .source("srt-violation")
        .kind(Kind.NETWORK)
        .action("network-outbound")
        .host("example.com")
        .port(80)
        .addressClass(AddressClass.CLOUD_METADATA)
        .reason("host is not on the allow list")
        .observedAt(T0)
        .ingestedAt(T0.plusMillis(40))
        .commandText("curl -s http://example.com/path?token=[REDACTED]#frag")
        .origin(new ViolationEvent.Origin("ci-runner-1/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl", 0, "host-a"))
        .build();
  }

  @Test
  void aViolationEventSurvivesTheSerdeUnchanged() {
    Serde<ViolationEvent> serde = Json.serde(ViolationEvent.class);
    byte[] bytes = serde.serializer().serialize("t", event());
    assertThat(serde.deserializer().deserialize("t", bytes)).isEqualTo(event());
  }

  @Test
  void theEventSerdeWritesAndReadsWhatTheMappersSerdeDoes() {
    Serde<ViolationEvent> fast = Json.eventSerde();
    Serde<ViolationEvent> mappers = Json.serde(ViolationEvent.class);
    assertThat(fast.serializer().serialize("t", event())).isEqualTo(mappers.serializer().serialize("t", event()));
    assertThat(fast.deserializer().deserialize("t", mappers.serializer().serialize("t", event()))).isEqualTo(event());
    assertThat(fast.serializer().serialize("t", null)).isNull();
    assertThat(fast.deserializer().deserialize("t", null)).isNull();
  }

  @Test
  void theWireFormatUsesTheDesignNamesAndLeavesUnknownFieldsOut() {
    String json = Json.write(event());
    assertThat(json).isEqualTo("{\"schema\":1,\"eventId\":\"0fca5e915d66332ec62055ef63a14398\","
        + "\"commandId\":\"xhfHytmXL-L6RsYw2CrSjA\",\"agentId\":\"ci-runner-1\",\"source\":\"srt-violation\","
        + "\"kind\":\"network\",\"action\":\"network-outbound\",\"host\":\"example.com\",\"port\":80,"
        + "\"addressClass\":\"cloud-metadata\",\"reason\":\"host is not on the allow list\","
        + "\"observedAt\":\"2026-11-29T18:45:32.887Z\",\"ingestedAt\":\"2026-11-29T18:45:32.927Z\","
        + "\"commandText\":\"curl -s http://example.com/path?token=[REDACTED]#frag\","
        + "\"origin\":{\"file\":\"ci-runner-1/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl\",\"offset\":0,\"ingestHost\":\"host-a\"}}");
  }

  @Test
  void anAlertSurvivesTheSerdeAndWritesItsEnumsInLowerCase() {
    Alert alert = Alert.firing("persistent-retry", "xhfHytmXL-L6RsYw2CrSjA").fingerprint("85765b1535365552")
        .severity(Alert.Severity.PAGE).agentId("ci-runner-1").host("example.com").port(80).count(5).windowStart(T0)
        .windowEnd(T0.plusSeconds(300)).firstSeen(T0).lastSeen(T0.plusSeconds(80))
        .summary("command refused 5 times").sampleEventIds(List.of("a", "b")).build();
    Serde<Alert> serde = Json.serde(Alert.class);
    byte[] bytes = serde.serializer().serialize("t", alert);
    assertThat(serde.deserializer().deserialize("t", bytes)).isEqualTo(alert);
    assertThat(new String(bytes, StandardCharsets.UTF_8))
        .contains("\"severity\":\"page\"", "\"status\":\"firing\"")
        .doesNotContain("\"role\"");
  }

  @Test
  void unknownFieldsFromANewerWriterAreIgnored() {
    ViolationEvent e = Json.read("{\"schema\":1,\"commandId\":\"xhfHytmXL-L6RsYw2CrSjA\",\"newField\":42}",
        ViolationEvent.class);
    assertThat(e.commandId()).isEqualTo("xhfHytmXL-L6RsYw2CrSjA");
  }

  @Test
  void aTombstoneStaysNull() {
    Serde<Alert> serde = Json.serde(Alert.class);
    assertThat(serde.serializer().serialize("t", null)).isNull();
    assertThat(serde.deserializer().deserialize("t", null)).isNull();
  }

  @Test
  void bytesThatAreNotAnEventFailWithTheTopicNamed() {
    for (Serde<ViolationEvent> serde : List.of(Json.serde(ViolationEvent.class), Json.eventSerde())) {
      assertThatThrownBy(() -> serde.deserializer().deserialize("knockwatch.violations",
          "not json".getBytes(StandardCharsets.UTF_8)))
          .isInstanceOf(SerializationException.class)
          .hasMessage("not a ViolationEvent JSON value on knockwatch.violations");
    }
  }
}
