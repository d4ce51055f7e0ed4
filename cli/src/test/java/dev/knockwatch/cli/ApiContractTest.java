package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import dev.knockwatch.events.Json;
import dev.knockwatch.streams.api.QueryApi;
import dev.knockwatch.testkit.SelfSignedTls;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

/**
 * Issue 26: the query API's contract. {@code ./knockwatch up} as the README runs it serves its
 * OpenAPI document at {@code /api/v1/openapi.json}; every route, method and status the document
 * names is asked for (but one that only a rebalance makes) and answers with that status and a
 * body its schema accepts; the test asks for nothing the document does not name. The old paths
 * answer alike, marked deprecated; {@code /-/ready} is 503 while detection starts, then 200, and
 * the compose healthcheck's own command agrees. With a keystore, {@code up} serves the API over
 * HTTPS only.
 */
@Tag("integration")
class ApiContractTest {

  static final String TOKEN = "api-contract-test-token-0123";
  static final String CMD = "ApiContractTestCommand1";
  /** Statuses the document names that no request can make on demand. */
  static final Set<String> NOT_ON_DEMAND = Set.of("GET /api/v1/commands/{commandId} 503",
      "GET /api/v1/commands 503", "GET /api/v1/alerts 503", "GET /api/v1/allowlist 503", "GET /api/v1/overview 503");
      // a rebalance, or an index built after an upgrade
  static final HttpClient HTTP = HttpClient.newHttpClient();

  @TempDir Path dir;
  int port;

  @Test
  void everyDocumentedRouteAnswersWithItsDocumentedStatusAndShape() throws Exception {
    Path checkout = Launched.copyOfRepository(dir.resolve("checkout"));
    port = Launched.freePort();
    try (Launched up = Launched.start(checkout, dir.resolve("out"), Map.of("KNOCKWATCH_API_TOKEN", TOKEN), "up",
        "--no-probes", "--api-port", String.valueOf(port), "--metrics-port", String.valueOf(Launched.freePort()),
        "--kafka-port", String.valueOf(Launched.freePort()))) {
      Map<String, HttpResponse<String>> answers = new LinkedHashMap<>();
      HttpResponse<String> notReady = null;
      Instant deadline = Instant.now().plusSeconds(180);
      while (true) {
        HttpResponse<String> r = tryGet("/-/ready");
        if (r != null && r.statusCode() == 503 && notReady == null) {
          notReady = r;
        }
        if (r != null && r.statusCode() == 200) {
          answers.put("GET /-/ready 200", r);
          break;
        }
        assertThat(Instant.now()).as("ready within 180 s\n" + Launched.tail(up.err(), 30)).isBefore(deadline);
        Thread.sleep(50);
      }
      assertThat(notReady).as("a 503 from /-/ready while detection started").isNotNull();
      assertThat(notReady.headers().firstValue("Retry-After")).hasValue("1");
      answers.put("GET /-/ready 503", notReady);
      assertThat(composeHealthcheck()).as("the compose healthcheck's own command, on a ready API").isZero();

      Path logs = Files.createDirectories(checkout.resolve("var/logs/ci-runner-1"));
      Files.writeString(logs.resolve(CMD + ".violations.jsonl"), "{\"line\":\"deny network-outbound exfil.example:443"
          + " (host is not on the allow list)\",\"commandId\":\"" + CMD + "\",\"timestamp\":\"" + Instant.now() + "\"}\n");
      HttpResponse<String> timeline = awaitAlert();

      answers.put("GET /api/v1/commands/{commandId} 200", timeline);
      answers.put("GET /api/v1/commands/{commandId} 400", send("GET", "/api/v1/commands/short", TOKEN, null));
      answers.put("GET /api/v1/commands/{commandId} 401", send("GET", "/api/v1/commands/" + CMD, null, null));
      answers.put("GET /api/v1/commands/{commandId} 404", send("GET", "/api/v1/commands/UnknownUnknownUnknown0", TOKEN,
          null));
      answers.put("GET /api/v1/commands 200", send("GET", "/api/v1/commands?limit=10", TOKEN, null));
      answers.put("GET /api/v1/commands 400", send("GET", "/api/v1/commands?limit=0", TOKEN, null));
      answers.put("GET /api/v1/commands 401", send("GET", "/api/v1/commands", "wrong", null));
      answers.put("GET /api/v1/alerts 200", send("GET", "/api/v1/alerts?status=firing", TOKEN, null));
      answers.put("GET /api/v1/alerts 400", send("GET", "/api/v1/alerts?status=maybe", TOKEN, null));
      answers.put("GET /api/v1/alerts 401", send("GET", "/api/v1/alerts", null, null));
      answers.put("GET /api/v1/allowlist 200", send("GET", "/api/v1/allowlist?since=7d&role=ci", TOKEN, null));
      answers.put("GET /api/v1/allowlist 400", send("GET", "/api/v1/allowlist?since=a-while", TOKEN, null));
      answers.put("GET /api/v1/allowlist 401", send("GET", "/api/v1/allowlist", null, null));
      answers.put("GET /api/v1/overview 200", send("GET", "/api/v1/overview?since=24h", TOKEN, null));
      answers.put("GET /api/v1/overview 400", send("GET", "/api/v1/overview?top=0", TOKEN, null));
      answers.put("GET /api/v1/overview 401", send("GET", "/api/v1/overview", "wrong", null));
      HttpResponse<String> created = send("POST", "/api/v1/silences", TOKEN,
          "{\"matchers\":{\"commandId\":\"" + CMD + "\"},\"duration\":\"PT1H\",\"comment\":\"contract\"}");
      answers.put("POST /api/v1/silences 201", created);
      answers.put("POST /api/v1/silences 400", send("POST", "/api/v1/silences", TOKEN, "{}"));
      answers.put("POST /api/v1/silences 401", send("POST", "/api/v1/silences", null, "{}"));
      answers.put("GET /api/v1/silences 200", send("GET", "/api/v1/silences", TOKEN, null));
      answers.put("GET /api/v1/silences 401", send("GET", "/api/v1/silences", null, null));
      String silenceId = Json.MAPPER.readTree(created.body()).path("id").asText();
      answers.put("DELETE /api/v1/silences/{id} 200", send("DELETE", "/api/v1/silences/" + silenceId, TOKEN, null));
      answers.put("DELETE /api/v1/silences/{id} 404", send("DELETE", "/api/v1/silences/no-such-silence", TOKEN, null));
      answers.put("DELETE /api/v1/silences/{id} 401", send("DELETE", "/api/v1/silences/" + silenceId, null, null));
      HttpResponse<String> doc = send("GET", "/api/v1/openapi.json", null, null);
      answers.put("GET /api/v1/openapi.json 200", doc);
      answers.put("GET /-/healthy 200", send("GET", "/-/healthy", null, null));

      JsonNode openapi = Json.MAPPER.readTree(doc.body());
      Set<String> documented = new TreeSet<>();
      SchemaRegistry schemas = SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12);
      for (Iterator<Map.Entry<String, JsonNode>> paths = openapi.path("paths").fields(); paths.hasNext(); ) {
        Map.Entry<String, JsonNode> path = paths.next();
        for (Iterator<Map.Entry<String, JsonNode>> ops = path.getValue().fields(); ops.hasNext(); ) {
          Map.Entry<String, JsonNode> op = ops.next();
          for (Iterator<Map.Entry<String, JsonNode>> rs = op.getValue().path("responses").fields(); rs.hasNext(); ) {
            Map.Entry<String, JsonNode> response = rs.next();
            String key = op.getKey().toUpperCase(java.util.Locale.ROOT) + " " + path.getKey() + " " + response.getKey();
            documented.add(key);
            HttpResponse<String> answer = answers.get(key);
            if (answer == null) {
              continue; // NOT_ON_DEMAND, or missing: the set comparison below says which
            }
            assertThat(answer.statusCode()).as(key + ": " + answer.body()).isEqualTo(Integer.parseInt(response.getKey()));
            assertThat(answer.headers().firstValue("Content-Type")).as(key).hasValueSatisfying(
                t -> assertThat(t).startsWith("application/json"));
            JsonNode schemaNode = resolve(resolve(response.getValue(), openapi)
                .path("content").path("application/json").path("schema"), openapi);
            Schema schema = schemas.getSchema(schemaNode);
            List<com.networknt.schema.Error> errors = schema.validate(Json.MAPPER.readTree(answer.body()));
            assertThat(errors).as(key + ": " + answer.body()).isEmpty();
            assertThat(answer.headers().firstValue("Deprecation")).as(key + " is no alias").isEmpty();
          }
        }
      }
      Set<String> asked = new TreeSet<>(answers.keySet());
      asked.addAll(NOT_ON_DEMAND);
      assertThat(asked).as("every documented route and status asked for, and nothing else").isEqualTo(documented);

      // an old path answers as its /api/v1/ route, marked deprecated with its successor
      HttpResponse<String> alias = send("GET", "/api/commands/" + CMD, TOKEN, null);
      assertThat(alias.statusCode()).isEqualTo(200);
      assertThat(Json.MAPPER.readTree(alias.body()).path("commandId").asText()).isEqualTo(CMD);
      assertThat(alias.headers().firstValue("Deprecation")).hasValue("true");
      assertThat(alias.headers().firstValue("Link")).hasValue("</api/v1/commands/" + CMD + ">; rel=\"successor-version\"");
      assertThat(send("GET", "/api/silences", TOKEN, null).statusCode()).isEqualTo(200);
      System.out.printf("ApiContractTest: %d documented answers checked; /-/ready said: %s%n", answers.size(),
          notReady.body());
    }
  }

  /** {@code up --api-tls-keystore ... --api-tls-truststore ...}: the API answers over HTTPS only, and no password shows. */
  @Test
  void upServesTheApiOverHttpsWithTheKeystoreItIsGiven() throws Exception {
    Path checkout = Launched.copyOfRepository(dir.resolve("checkout"));
    String password = "api-store-Pa55word-d0-not-print";
    SelfSignedTls tls = SelfSignedTls.generate(checkout.resolve("tls"), password);
    port = Launched.freePort();
    try (Launched up = Launched.start(checkout, dir.resolve("out"), Map.of("KNOCKWATCH_API_TOKEN", TOKEN,
        "KNOCKWATCH_API_TLS_PASSWORD", password), "up", "--no-probes", "--api-port", String.valueOf(port),
        "--metrics-port", String.valueOf(Launched.freePort()), "--kafka-port", String.valueOf(Launched.freePort()),
        "--api-tls-keystore", "tls/server.keystore.p12", "--api-tls-truststore", "tls/truststore.p12")) {
      assertThat(up.awaitLine("  api      ", Duration.ofSeconds(180))).startsWith("  api      https://");
      HttpClient https = HttpClient.newBuilder()
          .sslContext(dev.knockwatch.streams.api.Tls.fromPkcs12(tls.keystore(), tls.truststore(), password.toCharArray()).client()).build();
      HttpRequest ready = HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + port + "/-/ready"))
          .timeout(Duration.ofSeconds(10)).build();
      Instant deadline = Instant.now().plusSeconds(120);
      while (https.send(ready, HttpResponse.BodyHandlers.ofString()).statusCode() != 200) {
        assertThat(Instant.now()).as("ready within 120 s").isBefore(deadline);
        Thread.sleep(200);
      }
      HttpResponse<String> alerts = https.send(HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + port
          + "/api/v1/alerts")).header("Authorization", "Bearer " + TOKEN).build(), HttpResponse.BodyHandlers.ofString());
      assertThat(alerts.statusCode()).as(alerts.body()).isEqualTo(200);
      assertThat(tryGet("/-/healthy")).as("no plaintext answer on the HTTPS port").isNull();
      assertThat(up.out() + up.err()).doesNotContain(password);
    }
  }

  /** Waits until the command's timeline holds its off-role alert. */
  private HttpResponse<String> awaitAlert() throws Exception {
    Instant deadline = Instant.now().plusSeconds(120);
    while (true) {
      HttpResponse<String> r = send("GET", "/api/v1/commands/" + CMD, TOKEN, null);
      if (r.statusCode() == 200 && Json.MAPPER.readTree(r.body()).path("alerts").size() > 0) {
        return r;
      }
      assertThat(Instant.now()).as("the command's alert within 120 s: " + r.body()).isBefore(deadline);
      Thread.sleep(200);
    }
  }

  /** {@code node} with every {@code $ref} into the document replaced by what it names. */
  private static JsonNode resolve(JsonNode node, JsonNode doc) {
    if (node.isObject() && node.has("$ref")) {
      return resolve(doc.at(node.get("$ref").asText().substring(1)), doc);
    }
    if (node.isObject()) {
      ObjectNode copy = Json.MAPPER.createObjectNode();
      node.fields().forEachRemaining(e -> copy.set(e.getKey(), resolve(e.getValue(), doc)));
      return copy;
    }
    if (node.isArray()) {
      var copy = Json.MAPPER.createArrayNode();
      node.forEach(n -> copy.add(resolve(n, doc)));
      return copy;
    }
    return node;
  }

  /** docker-compose.yml's streams healthcheck, run as compose runs it, against this API's port. */
  @SuppressWarnings("unchecked")
  private int composeHealthcheck() throws Exception {
    Map<String, Object> compose = new Yaml().load(Files.readString(Launched.REPO.resolve("docker-compose.yml")));
    Map<String, Object> streams = (Map<String, Object>) ((Map<String, Object>) compose.get("services")).get("streams");
    List<String> test = (List<String>) ((Map<String, Object>) streams.get("healthcheck")).get("test");
    assertThat(test.get(0)).isEqualTo("CMD-SHELL");
    assertThat(test.get(1)).contains("/-/ready");
    Process p = new ProcessBuilder("sh", "-c", test.get(1).replace("/8080", "/" + port)).inheritIO().start();
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    return p.exitValue();
  }

  private HttpResponse<String> tryGet(String path) {
    try {
      return send("GET", path, null, null);
    } catch (java.io.IOException e) {
      return null; // not listening yet
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private HttpResponse<String> send(String method, String path, String token, String body)
      throws java.io.IOException, InterruptedException {
    HttpRequest.Builder r = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(10))
        .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
    if (token != null) {
      r.header("Authorization", "Bearer " + token);
    }
    if (body != null) {
      r.header("Content-Type", "application/json");
    }
    return HTTP.send(r.build(), HttpResponse.BodyHandlers.ofString());
  }
}
