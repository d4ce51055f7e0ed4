package dev.knockwatch.streams.timeline;

import dev.knockwatch.streams.TimelineTopology;
import dev.knockwatch.streams.detect.CountDetector;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.StreamsApp;
import dev.knockwatch.streams.api.QueryApi;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.testkit.EmbeddedKafkaExtension;
import dev.knockwatch.testkit.SelfSignedTls;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.state.HostInfo;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 26: the query API over TLS. Two timeline instances serve HTTPS with a keytool certificate
 * and forward to each other over HTTPS, verifying the peer: either answers every command. An API
 * whose trust material does not hold that certificate cannot forward (503, the bearer token never
 * sent to an unverified peer), and a plaintext request gets no answer.
 */
@Tag("integration")
@ExtendWith(EmbeddedKafkaExtension.class)
class ApiTlsTest {

  static final String TOKEN = "t0k3n-for-the-tls-test";
  static final String PASSWORD = "tls-test-store-password";
  static final Instant T0 = Instant.parse("2026-12-01T02:10:00Z");
  static final int COMMANDS = 12;

  @TempDir Path dir;

  static String id(int i) {
    return String.format("ApiTlsTestCommand%05d", i);
  }

  @Test
  void instancesServeAndForwardOverVerifiedTls(EmbeddedKafkaBroker broker) throws Exception {
    SelfSignedTls cert = SelfSignedTls.generate(dir.resolve("tls"), PASSWORD);
    SelfSignedTls stranger = SelfSignedTls.generate(dir.resolve("other"), PASSWORD);
    dev.knockwatch.streams.api.Tls tls = dev.knockwatch.streams.api.Tls.fromPkcs12(cert.keystore(), cert.truststore(), PASSWORD.toCharArray());
    HttpClient client = HttpClient.newBuilder().sslContext(tls.client()).build();
    try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
        broker.bootstrapServers()), new StringSerializer(), new StringSerializer())) {
      for (int i = 0; i < COMMANDS; i++) {
        ViolationEvent e = ViolationEvent.builder().eventId("tls" + i).commandId(id(i)).agentId("ci-runner-1")
            .source("srt-violation").kind(Kind.NETWORK).action("network-outbound").host("evil.example").port(443)
            .observedAt(T0.plusSeconds(i)).build();
        p.send(new ProducerRecord<>(Topics.VIOLATIONS.name(), null, e.observedAt().toEpochMilli(), id(i), Json.write(e)));
      }
    }
    List<StreamsApp> apps = new ArrayList<>();
    List<QueryApi> apis = new ArrayList<>();
    try {
      for (int n = 0; n < 2; n++) {
        int port = dev.knockwatch.testkit.TestPorts.free();
        StreamsApp app = new StreamsApp("timeline-tls-test", broker.bootstrapServers(), dir.resolve("i" + n),
            TimelineTopology.build(Policy.ofRules(List.of(CountDetector.defaultRule())), Duration.ofDays(3650)),
            Map.of(StreamsConfig.APPLICATION_SERVER_CONFIG, "127.0.0.1:" + port,
                StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE));
        apps.add(app);
        apis.add(new QueryApi(app.streams(), TOKEN, "127.0.0.1", port, new HostInfo("127.0.0.1", port), tls));
      }
      apps.forEach(a -> a.start(Duration.ofSeconds(120)));
      Instant deadline = Instant.now().plusSeconds(90);
      for (int i = 0; i < COMMANDS; i++) {
        HttpResponse<String> r = get(client, "https", apis.get(0).port(), "/api/v1/commands/" + id(i));
        while (r.statusCode() != 200 && Instant.now().isBefore(deadline)) {
          Thread.sleep(200);
          r = get(client, "https", apis.get(0).port(), "/api/v1/commands/" + id(i));
        }
        assertThat(r.statusCode()).as(id(i) + ": " + r.body()).isEqualTo(200);
        assertThat(Json.MAPPER.readTree(r.body()).path("commandId").asText()).isEqualTo(id(i));
      }
      assertThat(get(client, "https", apis.get(1).port(), "/api/v1/commands?limit=100").body())
          .as("the list, gathered over TLS").contains(id(0), id(COMMANDS - 1));

      // an API that does not trust its peers' certificate forwards nothing to them
      int port = dev.knockwatch.testkit.TestPorts.free();
      dev.knockwatch.streams.api.Tls distrustful = new dev.knockwatch.streams.api.Tls(tls.server(),
          dev.knockwatch.streams.api.Tls.fromPkcs12(stranger.keystore(), stranger.truststore(), PASSWORD.toCharArray()).client());
      QueryApi unverified = new QueryApi(apps.get(0).streams(), TOKEN, "127.0.0.1", port,
          new HostInfo("127.0.0.1", port), distrustful);
      apis.add(unverified);
      HttpResponse<String> refused = get(client, "https", port, "/api/v1/commands/" + id(0));
      assertThat(refused.statusCode()).as(refused.body()).isEqualTo(503);
      assertThat(refused.body()).contains("does not answer");

      assertThatThrownBy(() -> get(HttpClient.newHttpClient(), "http", apis.get(0).port(), "/api/v1/commands/" + id(0)))
          .as("plaintext HTTP to the TLS port").isInstanceOf(IOException.class);
    } finally {
      apis.forEach(QueryApi::close);
      apps.forEach(StreamsApp::close);
    }
  }

  static HttpResponse<String> get(HttpClient client, String scheme, int port, String path) throws Exception {
    return client.send(HttpRequest.newBuilder(URI.create(scheme + "://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(10)).header("Authorization", "Bearer " + TOKEN).build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
