package dev.knockwatch.notify.silence;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.Json;
import dev.knockwatch.testkit.EmbeddedKafkaExtension;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@Tag("integration")
@ExtendWith(EmbeddedKafkaExtension.class)
class SilencesApiTest {

  static final HttpClient HTTP = HttpClient.newHttpClient();

  static HttpResponse<String> call(int port, String method, String path, String body) throws Exception {
    HttpRequest.Builder r = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path));
    r.method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    return HTTP.send(r.build(), HttpResponse.BodyHandlers.ofString());
  }

  static JsonNode find(JsonNode list, String id) {
    for (JsonNode s : list) {
      if (s.get("id").asText().equals(id)) {
        return s;
      }
    }
    return null;
  }

  @Test
  void addListAndExpireOverHttpAndBadBodiesAreRefusedWithTheirReason(EmbeddedKafkaBroker broker) throws Exception {
    HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    try (SilencesApi api = new SilencesApi(broker.bootstrapServers(), Map.of())) {
      server.createContext("/api/silences", api);
      server.start();
      int port = server.getAddress().getPort();

      HttpResponse<String> added = call(port, "POST", "/api/silences",
          "{\"matchers\":{\"rule\":\"off-role-*\",\"agentId\":\"ci-runner-7\"},\"duration\":\"PT30M\","
              + "\"comment\":\"new allowlist rolling out\",\"createdBy\":\"ana\"}");
      assertThat(added.statusCode()).as(added.body()).isEqualTo(201);
      String id = Json.MAPPER.readTree(added.body()).get("id").asText();

      JsonNode mine = find(Json.MAPPER.readTree(call(port, "GET", "/api/silences", null).body()).get("silences"), id);
      assertThat(mine).isNotNull();
      assertThat(mine.get("state").asText()).isEqualTo("active");
      assertThat(mine.get("matchers").get("rule").asText()).isEqualTo("off-role-*");

      assertThat(call(port, "DELETE", "/api/silences/" + id, null).statusCode()).isEqualTo(200);
      JsonNode after = find(Json.MAPPER.readTree(call(port, "GET", "/api/silences", null).body()).get("silences"), id);
      assertThat(after.get("state").asText()).isEqualTo("expired");

      assertThat(call(port, "DELETE", "/api/silences/nope", null).statusCode()).isEqualTo(404);
      HttpResponse<String> badField = call(port, "POST", "/api/silences",
          "{\"matchers\":{\"colour\":\"red\"},\"comment\":\"x\"}");
      assertThat(badField.statusCode()).isEqualTo(400);
      assertThat(Json.MAPPER.readTree(badField.body()).get("error").asText())
          .isEqualTo("matcher \"colour\" is not one of agentId, commandId, host, role, rule");
      assertThat(Json.MAPPER.readTree(call(port, "POST", "/api/silences", "{\"comment\":\"x\"}").body())
          .get("error").asText()).startsWith("matchers: give at least one of");
      assertThat(Json.MAPPER.readTree(call(port, "POST", "/api/silences", "{\"matchers\":{\"rule\":\"r\"}}").body())
          .get("error").asText()).isEqualTo("comment: say why");
      assertThat(call(port, "POST", "/api/silences", "not json").statusCode()).isEqualTo(400);
      assertThat(call(port, "POST", "/api/silences",
          "{\"matchers\":{\"rule\":\"r\"},\"comment\":\"x\",\"endsAt\":\"2020-01-01T00:00:00Z\"}").statusCode()).isEqualTo(400);
    } finally {
      server.stop(0);
    }
  }
}
