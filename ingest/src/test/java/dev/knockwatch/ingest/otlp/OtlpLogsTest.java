package dev.knockwatch.ingest.otlp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.google.protobuf.ByteString;
import dev.knockwatch.ingest.spi.TelemetryRecord;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.ArrayValue;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.logs.v1.LogRecord;
import io.opentelemetry.proto.logs.v1.ResourceLogs;
import io.opentelemetry.proto.logs.v1.ScopeLogs;
import io.opentelemetry.proto.resource.v1.Resource;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * OTLP's two encodings read into one record: the real bodies Claude Code 2.1.332 exported (its
 * JavaScript exporter's JSON, with numbers as numbers, and its protobuf), a request written both
 * ways giving the same records and digests, and hostile bodies never escaping as anything but a
 * bad request or a bad record.
 */
class OtlpLogsTest {

  static byte[] resource(String name) throws IOException {
    try (InputStream in = OtlpLogsTest.class.getResourceAsStream(name)) {
      return in.readAllBytes();
    }
  }

  @Test
  void claudeCodesRealJsonAndProtobufBodiesAreRead() throws Exception {
    OtlpLogs.Decoded json = OtlpJson.read(resource("claude-code-2.1.332-logs.json"));
    assertThat(json.bad()).isEmpty();
    assertThat(json.entries()).hasSize(16);
    TelemetryRecord first = json.entries().get(0).record();
    assertThat(first.eventName()).as("the attribute: Claude Code sets no event_name").isEqualTo("managed_settings_resolved");
    assertThat(first.service()).isEqualTo("claude-code");
    assertThat(first.scope()).isEqualTo("com.anthropic.claude_code.events");
    assertThat(first.body()).isEqualTo("claude_code.managed_settings_resolved");
    assertThat(first.time()).as("timeUnixNano, as its event.timestamp says")
        .isEqualTo(Instant.parse(first.attribute("event.timestamp")));
    assertThat(first.attribute("event.sequence")).as("an intValue sent as a JSON number").isEqualTo("0");
    assertThat(first.attribute("managed_settings.sources")).as("an array as JSON").isEqualTo("[]");

    OtlpLogs.Decoded pb = OtlpLogs.records(OtlpLogs.fromProtobuf(resource("claude-code-2.1.332-logs.pb")));
    assertThat(pb.entries()).isNotEmpty();
    assertThat(pb.entries()).extracting(e -> e.record().service()).containsOnly("claude-code");
    assertThat(pb.entries()).extracting(e -> e.record().eventName()).contains("tool_decision", "tool_result");
  }

  @Test
  void oneRequestInBothEncodingsIsTheSameRecordsWithTheSameDigests() throws Exception {
    LogRecord r = LogRecord.newBuilder().setTimeUnixNano(1_796_535_017_722_000_001L)
        .setObservedTimeUnixNano(1_796_535_017_800_000_000L).setSeverityNumberValue(9).setSeverityText("INFO")
        .setBody(AnyValue.newBuilder().setStringValue("codex.tool_result"))
        .addAttributes(kv("event.name", AnyValue.newBuilder().setStringValue("codex.tool_result").build()))
        .addAttributes(kv("call_id", AnyValue.newBuilder().setStringValue("call_abc").build()))
        .addAttributes(kv("n", AnyValue.newBuilder().setIntValue(-42).build()))
        .addAttributes(kv("ok", AnyValue.newBuilder().setBoolValue(true).build()))
        .addAttributes(kv("d", AnyValue.newBuilder().setDoubleValue(1.5).build()))
        .addAttributes(kv("b", AnyValue.newBuilder().setBytesValue(ByteString.copyFromUtf8("hi")).build()))
        .addAttributes(kv("a", AnyValue.newBuilder().setArrayValue(ArrayValue.newBuilder()
            .addValues(AnyValue.newBuilder().setStringValue("x")).addValues(AnyValue.newBuilder().setIntValue(1))).build()))
        .setTraceId(ByteString.copyFrom(new byte[] {0x5b, (byte) 0x8e, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}))
        .setSpanId(ByteString.copyFrom(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}))
        .setEventName("codex.tool_result").build();
    ExportLogsServiceRequest request = ExportLogsServiceRequest.newBuilder().addResourceLogs(ResourceLogs.newBuilder()
        .setResource(Resource.newBuilder().addAttributes(kv("service.name", AnyValue.newBuilder()
            .setStringValue("codex_exec").build())))
        .addScopeLogs(ScopeLogs.newBuilder().setScope(InstrumentationScope.newBuilder().setName("codex_otel.log_only"))
            .addLogRecords(r))).build();
    String json = """
        {"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"codex_exec"}}]},
         "scopeLogs":[{"scope":{"name":"codex_otel.log_only"},"logRecords":[{
           "timeUnixNano":"1796535017722000001","observedTimeUnixNano":1796535017800000000,
           "severityNumber":9,"severityText":"INFO","body":{"stringValue":"codex.tool_result"},
           "attributes":[{"key":"event.name","value":{"stringValue":"codex.tool_result"}},
             {"key":"call_id","value":{"stringValue":"call_abc"}},{"key":"n","value":{"intValue":"-42"}},
             {"key":"ok","value":{"boolValue":true}},{"key":"d","value":{"doubleValue":1.5}},
             {"key":"b","value":{"bytesValue":"aGk="}},
             {"key":"a","value":{"arrayValue":{"values":[{"stringValue":"x"},{"intValue":1}]}}}],
           "traceId":"5B8E000102030405060708090A0B0C0D","spanId":"0102030405060708",
           "eventName":"codex.tool_result","someFieldOfALaterVersion":{"x":1}}]}]}]}
        """;
    OtlpLogs.Decoded fromPb = OtlpLogs.records(OtlpLogs.fromProtobuf(request.toByteArray()));
    OtlpLogs.Decoded fromJson = OtlpJson.read(json.getBytes(StandardCharsets.UTF_8));
    assertThat(fromJson.bad()).isEmpty();
    assertThat(fromJson.entries()).usingRecursiveFieldByFieldElementComparator().isEqualTo(fromPb.entries());
    TelemetryRecord t = fromPb.entries().get(0).record();
    assertThat(t.attributes()).containsEntry("n", "-42").containsEntry("ok", "true").containsEntry("d", "1.5")
        .containsEntry("b", "aGk=").containsEntry("a", "[\"x\",1]");
    assertThat(t.time()).isEqualTo(Instant.ofEpochSecond(1_796_535_017L, 722_000_001));
    // the original field names, as the Collector also reads them
    OtlpLogs.Decoded snake = OtlpJson.read(json.replace("logRecords", "log_records").replace("timeUnixNano",
        "time_unix_nano").getBytes(StandardCharsets.UTF_8));
    assertThat(snake.entries().get(0).record().time()).isEqualTo(t.time());
  }

  @Test
  void aRecordOfTheWrongShapeIsOneBadRecordAndTheOthersAreRead() throws Exception {
    String json = """
        {"resourceLogs":[{"scopeLogs":[{"logRecords":[
          {"attributes":[{"key":"event.name","value":{"stringValue":"a"}}]},
          {"timeUnixNano":{"not":"a number"}},
          {"attributes":[{"key":"x","value":{"intValue":"99999999999999999999999"}}]},
          {"traceId":"zz"},
          {"attributes":"not a list"},
          {"attributes":[{"key":"deep","value":%s}]},
          {"attributes":[{"key":"event.name","value":{"stringValue":"b"}}]}
        ]}]}]}
        """.formatted(nested(OtlpLogs.MAX_DEPTH + 2));
    OtlpLogs.Decoded d = OtlpJson.read(json.getBytes(StandardCharsets.UTF_8));
    assertThat(d.entries()).extracting(e -> e.record().eventName()).containsExactly("a", "b");
    assertThat(d.bad()).extracting(OtlpLogs.Bad::index).containsExactly(1, 2, 3, 4, 5);
    assertThat(d.bad()).allSatisfy(b -> assertThat(b.reason()).isNotBlank());
    assertThat(d.size()).isEqualTo(7);
  }

  @Test
  void hostileStringsAreMadeWellFormedAndValuesBounded() throws Exception {
    String huge = "x".repeat(OtlpLogs.MAX_VALUE_CHARS * 3) + "Network access to \\\"evil.example\\\" was blocked";
    StringBuilder many = new StringBuilder();
    for (int i = 0; i < OtlpLogs.MAX_ATTRIBUTES + 50; i++) {
      many.append(",{\"key\":\"k").append(i).append("\",\"value\":{\"stringValue\":\"v\"}}");
    }
    String json = "{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[{\"attributes\":["
        + "{\"key\":\"lone\",\"value\":{\"stringValue\":\"a\\ud800b\\udfffc\\u0000\\u202e\"}},"
        + "{\"key\":\"lone\",\"value\":{\"stringValue\":\"the second of a repeated key\"}},"
        + "{\"key\":\"huge\",\"value\":{\"stringValue\":\"" + huge + "\"}},"
        + "{\"key\":\"" + "K".repeat(10_000) + "\",\"value\":{\"stringValue\":\"long key\"}}"
        + many + "]}]}]}]}";
    TelemetryRecord r = OtlpJson.read(json.getBytes(StandardCharsets.UTF_8)).entries().get(0).record();
    assertThat(r.attribute("lone")).as("the first of a repeated key; lone surrogates replaced")
        .isEqualTo("a\uFFFDb\uFFFDc\u0000\u202e");
    assertThat(r.attribute("huge")).hasSizeLessThanOrEqualTo(OtlpLogs.MAX_VALUE_CHARS + 3)
        .as("the end is kept: a refusal is at the end of an output").endsWith("was blocked");
    assertThat(r.attributes().keySet()).allSatisfy(k -> assertThat(k).hasSizeLessThanOrEqualTo(OtlpLogs.MAX_KEY_CHARS));
    assertThat(r.attributes()).hasSize(OtlpLogs.MAX_ATTRIBUTES + 1)
        .containsEntry(OtlpLogs.DROPPED_KEY, Integer.toString(4 + OtlpLogs.MAX_ATTRIBUTES + 50 - 1 - OtlpLogs.MAX_ATTRIBUTES));
  }

  @Test
  void whatIsNoRequestIsABadRequestAndNothingElse() throws Exception {
    for (String body : List.of("", "[]", "nul", "{\"resourceLogs\":{}}", "{\"resourceLogs\":[", nested(500))) {
      assertThatThrownBy(() -> OtlpJson.read(body.getBytes(StandardCharsets.UTF_8))).as(body.length() > 80
          ? body.substring(0, 80) : body).isInstanceOf(OtlpLogs.BadRequest.class);
    }
    assertThat(OtlpJson.read("{}".getBytes(StandardCharsets.UTF_8)).size()).as("an empty request").isZero();
    byte[] real = resource("claude-code-2.1.332-logs.pb");
    Random random = new Random(63);
    for (int i = 0; i < 2_000; i++) {
      byte[] b;
      if (i % 3 == 0) {
        b = Arrays.copyOf(real, random.nextInt(real.length)); // truncated
      } else if (i % 3 == 1) {
        b = real.clone();
        for (int k = 0; k < 1 + random.nextInt(8); k++) {
          b[random.nextInt(b.length)] = (byte) random.nextInt(256);
        }
      } else {
        b = new byte[random.nextInt(2048)];
        random.nextBytes(b);
      }
      try {
        OtlpLogs.Decoded d = OtlpLogs.records(OtlpLogs.fromProtobuf(b));
        d.entries().forEach(e -> assertThat(e.digest()).hasSize(32));
      } catch (OtlpLogs.BadRequest expected) {
        assertThat(expected.getMessage()).startsWith("not an ExportLogsServiceRequest");
      }
    }
  }

  private static String nested(int depth) {
    String v = "{\"stringValue\":\"bottom\"}";
    for (int i = 0; i < depth; i++) {
      v = "{\"arrayValue\":{\"values\":[" + v + "]}}";
    }
    return v;
  }

  private static KeyValue kv(String key, AnyValue v) {
    return KeyValue.newBuilder().setKey(key).setValue(v).build();
  }
}
