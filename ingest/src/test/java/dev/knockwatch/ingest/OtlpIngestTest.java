package dev.knockwatch.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.RejectedLine;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.otlp.OtlpClients;
import dev.knockwatch.ingest.otlp.OtlpLogs;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The OTLP endpoint over real HTTP on 127.0.0.1: who may send (a token maps to an agent; a forged
 * attribute names none), what it answers (after the sink took the records; partial_success for bad
 * records, each also a rejected line; 400, 401, 413, 415, 429, 503 as OTLP/HTTP says), and that a
 * hostile client's bodies never stop it or blur another client's records.
 */
class OtlpIngestTest {

  static final String TOKEN = "tok-dev-laptop-7-0123456789abcdef";
  static final String OTHER = "tok-ci-runner-1-0123456789abcdef";

  @TempDir Path dir;
  private final Sink sink = new Sink();
  private OtlpIngest otlp;
  private final HttpClient http = HttpClient.newHttpClient();

  /** A sink the endpoint's threads share, which can be told to fail. */
  static final class Sink implements EventSink {
    final List<ViolationEvent> events = new ArrayList<>();
    final List<RejectedLine> rejected = new ArrayList<>();
    volatile boolean down;

    @Override
    public synchronized void publish(ViolationEvent e) {
      events.add(e);
    }

    @Override
    public synchronized void reject(RejectedLine r) {
      rejected.add(r);
    }

    @Override
    public void flush() {}

    @Override
    public synchronized void send(List<? extends Outgoing> records, Consumer<Exception> done) {
      if (down) {
        done.accept(new IllegalStateException("broker down"));
        return;
      }
      EventSink.super.send(records, done);
    }

    @Override
    public void close() {}
  }

  @BeforeEach
  void start() throws IOException {
    Path tokens = Files.createDirectories(dir.resolve("tokens"));
    Files.writeString(tokens.resolve("dev-laptop-7.token"), TOKEN + "\n");
    Files.writeString(tokens.resolve("ci-runner-1.token"), OTHER + "\n");
    otlp = new OtlpIngest(new OtlpIngest.Settings("127.0.0.1", 0, null,
        new OtlpClients(List.of(), tokens, Clock.systemUTC()), 64 * 1024, 50, 200), sink, "host-a", Clock.systemUTC());
  }

  @AfterEach
  void stop() {
    otlp.close();
  }

  /** One Codex call the proxy refused: its decision, the proxy's refusal, its result. */
  static String codexCall(String thread, String call, String host, String forgedAgentAttribute) {
    return """
        {"resourceLogs":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"codex_exec"}},
          {"key":"agent.id","value":{"stringValue":"%4$s"}},{"key":"host.name","value":{"stringValue":"%4$s"}}]},
         "scopeLogs":[{"scope":{"name":"codex_otel.log_only"},"logRecords":[
          {"timeUnixNano":"1796535565573000000","attributes":[{"key":"event.name","value":{"stringValue":"codex.tool_decision"}},
            {"key":"conversation.id","value":{"stringValue":"%1$s"}},{"key":"call_id","value":{"stringValue":"%2$s"}},
            {"key":"decision","value":{"stringValue":"approved"}},{"key":"source","value":{"stringValue":"Config"}}]},
          {"timeUnixNano":"1796535565650000000","attributes":[{"key":"event.name","value":{"stringValue":"codex.tool_result"}},
            {"key":"conversation.id","value":{"stringValue":"%1$s"}},{"key":"call_id","value":{"stringValue":"%2$s"}},
            {"key":"arguments","value":{"stringValue":"{\\"cmd\\":\\"curl -sS -m 5 https://%3$s/\\"}"}},
            {"key":"success","value":{"stringValue":"false"}},
            {"key":"output","value":{"stringValue":"exec_command failed: ProcessFailed { message: \\"Network access to \\\\\\"%3$s\\\\\\" was blocked: domain is not on the allowlist for the current sandbox mode.\\" }"}}]}]},
          {"scope":{"name":"codex_otel.network_proxy"},"logRecords":[
          {"timeUnixNano":"1796535565620000000","attributes":[{"key":"event.name","value":{"stringValue":"codex.network_proxy.policy_decision"}},
            {"key":"conversation.id","value":{"stringValue":"%1$s"}},{"key":"network.policy.decision","value":{"stringValue":"deny"}},
            {"key":"network.policy.reason","value":{"stringValue":"not_allowed"}},{"key":"network.policy.source","value":{"stringValue":"baseline_policy"}},
            {"key":"network.transport.protocol","value":{"stringValue":"https_connect"}},{"key":"server.address","value":{"stringValue":"%3$s"}},
            {"key":"server.port","value":{"intValue":443}},{"key":"http.request.method","value":{"stringValue":"CONNECT"}},
            {"key":"execution.id","value":{"stringValue":"e69ed772-2f70-4cd4-91fd-b398e0d45461"}}]}]}]}]}
        """.formatted(thread, call, host, forgedAgentAttribute);
  }

  HttpResponse<byte[]> post(String token, String contentType, byte[] body, String encoding) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + otlp.port() + OtlpIngest.PATH))
        .POST(HttpRequest.BodyPublishers.ofByteArray(body));
    if (token != null) {
      b.header("Authorization", "Bearer " + token);
    }
    if (contentType != null) {
      b.header("Content-Type", contentType);
    }
    if (encoding != null) {
      b.header("Content-Encoding", encoding);
    }
    return http.send(b.build(), HttpResponse.BodyHandlers.ofByteArray());
  }

  HttpResponse<byte[]> json(String token, String body) throws Exception {
    return post(token, "application/json", body.getBytes(StandardCharsets.UTF_8), null);
  }

  @Test
  void theAgentIsTheTokensNeverAnAttributeTheExporterChose() throws Exception {
    HttpResponse<byte[]> r = json(TOKEN, codexCall("01a249d6-4265-7601-a66f-313022fa5cd1", "call_Lk3vQ8ZpX2mN7rT4wY6bC9dF",
        "evil.example", "ci-runner-1"));
    assertThat(r.statusCode()).isEqualTo(200);
    assertThat(new String(r.body(), StandardCharsets.UTF_8)).isEqualTo("{}");
    assertThat(r.headers().firstValue("Content-Type")).hasValue("application/json");
    assertThat(sink.events).singleElement().satisfies(e -> {
      assertThat(e.agentId()).isEqualTo("dev-laptop-7");
      assertThat(e.commandId()).isEqualTo("call_Lk3vQ8ZpX2mN7rT4wY6bC9dF");
      assertThat(e.sessionId()).isEqualTo("01a249d6-4265-7601-a66f-313022fa5cd1");
      assertThat(e.host()).isEqualTo("evil.example");
      assertThat(e.port()).as("the proxy's own record came first in time, and counts").isEqualTo(443);
      assertThat(e.evidence()).isEqualTo(ViolationEvent.EVIDENCE_SANDBOX);
      assertThat(e.origin().file()).isEqualTo("dev-laptop-7/otlp");
    });
  }

  @Test
  void unknownClientsAreRefusedAndNothingOfTheirsIsKept() throws Exception {
    String body = codexCall("t-1", "call_Lk3vQ8ZpX2mN7rT4wY6bC9dF", "evil.example", "dev-laptop-7");
    assertThat(json(null, body).statusCode()).isEqualTo(401);
    HttpResponse<byte[]> wrong = json("tok-not-a-token-we-know-at-all", body);
    assertThat(wrong.statusCode()).isEqualTo(401);
    assertThat(wrong.headers().firstValue("WWW-Authenticate")).hasValue("Bearer");
    assertThat(json("short", body).statusCode()).isEqualTo(401);
    assertThat(sink.events).isEmpty();
    assertThat(sink.rejected).isEmpty();
  }

  @Test
  void aBadRecordIsAPartialSuccessAndARejectedLineTheOthersAreRead() throws Exception {
    String good = codexCall("t-2", "call_Lk3vQ8ZpX2mN7rT4wY6bC9dF", "evil.example", "x");
    String body = good.replaceFirst("\"logRecords\":\\[", "\"logRecords\":[{\"timeUnixNano\":{\"no\":1}},");
    HttpResponse<byte[]> r = post(TOKEN, "application/x-protobuf", protobufOf(body), null);
    assertThat(r.statusCode()).isEqualTo(200);
    // as protobuf the bad record cannot be written: its JSON is refused whole instead, below
    ExportLogsServiceResponse none = ExportLogsServiceResponse.parseFrom(r.body());
    assertThat(none.hasPartialSuccess()).isFalse();

    HttpResponse<byte[]> partial = json(TOKEN, body);
    assertThat(partial.statusCode()).isEqualTo(200);
    String answer = new String(partial.body(), StandardCharsets.UTF_8);
    assertThat(answer).contains("\"rejectedLogRecords\":\"1\"").contains("timeUnixNano is no integer");
    assertThat(sink.rejected).singleElement().satisfies(l -> {
      assertThat(l.code()).isEqualTo("unparseable");
      assertThat(l.file()).isEqualTo("dev-laptop-7/otlp");
      assertThat(l.line()).contains("timeUnixNano");
    });
  }

  @Test
  void aBodyThatIsNoRequestIsA400AndARejectedLine() throws Exception {
    HttpResponse<byte[]> r = post(TOKEN, "application/x-protobuf", new byte[] {(byte) 0xff, 0x01, 0x02}, null);
    assertThat(r.statusCode()).isEqualTo(400);
    assertThat(new String(r.body(), StandardCharsets.ISO_8859_1)).contains("not an ExportLogsServiceRequest");
    assertThat(json(TOKEN, "{\"resourceLogs\":[").statusCode()).isEqualTo(400);
    assertThat(sink.rejected).hasSize(2).allSatisfy(l -> assertThat(l.code()).isEqualTo("unparseable"));
    assertThat(sink.rejected.get(0).line()).startsWith("base64:");
  }

  @Test
  void gzipIsReadAndBodiesAreBoundedBeforeAndAfterInflating() throws Exception {
    String body = codexCall("t-3", "call_Lk3vQ8ZpX2mN7rT4wY6bC9dF", "evil.example", "x");
    assertThat(post(TOKEN, "application/json", gzip(body.getBytes(StandardCharsets.UTF_8)), "gzip").statusCode())
        .isEqualTo(200);
    assertThat(sink.events).hasSize(1);
    byte[] bomb = gzip(new byte[10 * 1024 * 1024]); // 10 KB that inflate to 10 MB
    assertThat(bomb.length).isLessThan(64 * 1024);
    assertThat(post(TOKEN, "application/json", bomb, "gzip").statusCode()).isEqualTo(413);
    assertThat(post(TOKEN, "application/json", new byte[70 * 1024], null).statusCode()).isEqualTo(413);
    assertThat(post(TOKEN, "application/json", body.getBytes(StandardCharsets.UTF_8), "br").statusCode()).isEqualTo(415);
    assertThat(post(TOKEN, "text/plain", body.getBytes(StandardCharsets.UTF_8), null).statusCode()).isEqualTo(415);
  }

  @Test
  void aClientOverItsRateIsToldWhenToSendAgainAndOthersAreNot() throws Exception {
    // a burst of 200 records, 50 a second: a second request of 150 at once is over
    StringBuilder many = new StringBuilder("{\"resourceLogs\":[{\"scopeLogs\":[{\"logRecords\":[");
    for (int i = 0; i < 150; i++) {
      many.append(i == 0 ? "" : ",").append("{\"attributes\":[{\"key\":\"event.name\",\"value\":{\"stringValue\":\"codex.sse_event\"}}]}");
    }
    many.append("]}]}]}");
    assertThat(json(TOKEN, many.toString()).statusCode()).isEqualTo(200);
    HttpResponse<byte[]> over = json(TOKEN, many.toString());
    assertThat(over.statusCode()).isEqualTo(429);
    assertThat(Long.parseLong(over.headers().firstValue("Retry-After").orElseThrow())).isBetween(1L, 3L);
    assertThat(json(OTHER, many.toString()).statusCode()).as("another client's bucket").isEqualTo(200);
  }

  @Test
  void kafkaDownIsA503AndTheRetryCountsOnce() throws Exception {
    String body = codexCall("t-4", "call_Lk3vQ8ZpX2mN7rT4wY6bC9dF", "evil.example", "x");
    sink.down = true;
    HttpResponse<byte[]> r = json(TOKEN, body);
    assertThat(r.statusCode()).isEqualTo(503);
    assertThat(r.headers().firstValue("Retry-After")).isPresent();
    sink.down = false;
    assertThat(json(TOKEN, body).statusCode()).as("sent again: read afresh").isEqualTo(200);
    assertThat(sink.events).hasSize(1);
    assertThat(json(TOKEN, body).statusCode()).as("sent once more (its answer lost)").isEqualTo(200);
    assertThat(sink.events).as("the call counted already").hasSize(1);
    String id = sink.events.get(0).eventId();
    // an endpoint that restarted knows nothing of it: the same id, which detection counts once
    otlp.close();
    otlp = new OtlpIngest(new OtlpIngest.Settings("127.0.0.1", 0, null, new OtlpClients(List.of(),
        dir.resolve("tokens"), Clock.systemUTC()), 64 * 1024, 50, 200), sink, "host-b", Clock.systemUTC());
    assertThat(json(TOKEN, body).statusCode()).isEqualTo(200);
    assertThat(sink.events).hasSize(2).extracting(ViolationEvent::eventId).containsOnly(id);
  }

  @Test
  void hostileBodiesNeverStopTheEndpointNorBlurAnotherClientsRecords() throws Exception {
    Hostile hostile = new Hostile(4318);
    Random random = hostile.random();
    byte[] real = OtlpLogsTestResources.claudeCodeProtobuf();
    String[] names = {"codex.tool_result", "codex.network_proxy.policy_decision", "codex.tool_decision",
        "codex.user_prompt", "codex.sandbox_outcome", "tool_result", "other"};
    String[] keys = {"conversation.id", "call_id", "arguments", "output", "server.address", "server.port",
        "execution.id", "network.policy.decision", "decision", "source", "outcome", "agent.id", "session.id"};
    for (int i = 0; i < 200; i++) {
      byte[] b = switch (i % 4) {
        case 0 -> java.util.Arrays.copyOf(real, random.nextInt(real.length));
        case 1 -> {
          byte[] x = real.clone();
          x[random.nextInt(x.length)] = (byte) random.nextInt(256);
          yield x;
        }
        case 2 -> {
          byte[] x = new byte[random.nextInt(4096)];
          random.nextBytes(x);
          yield x;
        }
        default -> {
          // a request of Codex's records, every value the agent's choice, every field it likes
          StringBuilder j = new StringBuilder("{\"resourceLogs\":[{\"resource\":{\"attributes\":[{\"key\":\"agent.id\","
              + "\"value\":{\"stringValue\":\"dev-laptop-7\"}}]},\"scopeLogs\":[{\"logRecords\":[");
          for (int r = 0; r < 1 + random.nextInt(6); r++) {
            j.append(r == 0 ? "" : ",").append("{\"attributes\":[{\"key\":\"event.name\",\"value\":{\"stringValue\":\"")
                .append(names[random.nextInt(names.length)]).append("\"}}");
            for (int k = 0; k < random.nextInt(8); k++) {
              j.append(",{\"key\":\"").append(keys[random.nextInt(keys.length)]).append("\",\"value\":{\"stringValue\":")
                  .append(Hostile.json(random.nextInt(3) == 0 ? "deny" : hostile.text())).append("}}");
            }
            j.append("]}");
          }
          yield j.append("]}]}]}").toString().getBytes(StandardCharsets.UTF_8);
        }
      };
      int status;
      try {
        status = post(OTHER, i % 4 == 3 || i % 8 == 1 ? "application/json" : "application/x-protobuf", b, null)
          .statusCode();
      } catch (IOException e) {
        throw new AssertionError("request " + i + " of " + b.length + " bytes: " + new String(b, 0, Math.min(200, b.length), StandardCharsets.ISO_8859_1), e);
      }
      assertThat(status).as("request %d", i).isIn(200, 400, 413, 429);
    }
    Thread.sleep(1000); // its bucket refills: the hostile client's own good records are taken too
    assertThat(json(TOKEN, codexCall("t-5", "call_Lk3vQ8ZpX2mN7rT4wY6bC9dF", "evil.example", "ci-runner-1"))
        .statusCode()).isEqualTo(200);
    assertThat(json(OTHER, codexCall("t-6", "call_Qw8eR2tY5uI7oP1aS3dF6gH9", "evil.example", "dev-laptop-7"))
        .statusCode()).isEqualTo(200);
    assertThat(sink.events).filteredOn(e -> "t-5".equals(e.sessionId())).singleElement()
        .satisfies(e -> assertThat(e.agentId()).isEqualTo("dev-laptop-7"));
    assertThat(sink.events).filteredOn(e -> !"t-5".equals(e.sessionId()) && e.unattributed() == null)
        .anySatisfy(e -> assertThat(e.sessionId()).isEqualTo("t-6")).allSatisfy(e -> assertThat(e.agentId()).as("whatever its records said").isEqualTo("ci-runner-1"));
    assertThat(sink.events).filteredOn(e -> e.unattributed() != null).as("a refusal rejected for its call id")
        .allSatisfy(e -> assertThat(e.unattributed().directory()).isEqualTo("ci-runner-1"));
    assertThat(sink.rejected).allSatisfy(l -> assertThat(l.file()).isEqualTo("ci-runner-1/otlp"));
  }

  static byte[] protobufOf(String json) throws Exception {
    OtlpLogs.Decoded d = dev.knockwatch.ingest.otlp.OtlpJson.read(json.getBytes(StandardCharsets.UTF_8));
    // the records that could be read, as their exporter would have sent them
    io.opentelemetry.proto.logs.v1.ScopeLogs.Builder scope = io.opentelemetry.proto.logs.v1.ScopeLogs.newBuilder();
    for (OtlpLogs.Entry e : d.entries()) {
      io.opentelemetry.proto.logs.v1.LogRecord.Builder r = io.opentelemetry.proto.logs.v1.LogRecord.newBuilder();
      e.record().attributes().forEach((k, v) -> r.addAttributes(io.opentelemetry.proto.common.v1.KeyValue.newBuilder()
          .setKey(k).setValue(io.opentelemetry.proto.common.v1.AnyValue.newBuilder().setStringValue(v))));
      if (e.record().time() != null) {
        r.setTimeUnixNano(e.record().time().getEpochSecond() * 1_000_000_000L + e.record().time().getNano());
      }
      scope.addLogRecords(r);
    }
    return io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest.newBuilder()
        .addResourceLogs(io.opentelemetry.proto.logs.v1.ResourceLogs.newBuilder().addScopeLogs(scope)).build().toByteArray();
  }

  static byte[] gzip(byte[] b) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
      gz.write(b);
    }
    return out.toByteArray();
  }
}
