package dev.knockwatch.notify.silence;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.Silence;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

/**
 * {@code GET /api/silences} (every silence with its state), {@code POST /api/silences} (a new one:
 * {@code matchers}, {@code endsAt} or {@code duration} as ISO-8601, {@code comment},
 * {@code createdBy}) and {@code DELETE /api/silences/{id}} (expire it now). The query API mounts it
 * behind its bearer token check.
 */
public final class SilencesApi implements HttpHandler, AutoCloseable {

  private static final int MAX_BODY = 16 * 1024;
  private final Silences silences;
  private final org.apache.kafka.clients.producer.KafkaProducer<String, String> producer;

  public SilencesApi(String bootstrapServers, Map<String, Object> clientProps) {
    this.silences = Silences.onDemand(bootstrapServers, clientProps);
    // one producer for the API's life, made now: a request does not wait for a new client's
    // connections, metadata and producer id
    this.producer = Silences.producer(bootstrapServers, clientProps);
  }

  @Override
  public synchronized void handle(HttpExchange ex) throws IOException {
    try {
      silences.catchUp(); // read your writes, the CLI's too
      // /api/v1/silences, and its alias /api/silences
      String path = ex.getRequestURI().getPath().replaceFirst("^/api/v1/", "/api/");
      String method = ex.getRequestMethod();
      if (path.equals("/api/silences") && method.equals("GET")) {
        list(ex);
      } else if (path.equals("/api/silences") && method.equals("POST")) {
        add(ex);
      } else if (path.startsWith("/api/silences/") && method.equals("DELETE")) {
        expire(ex, path.substring("/api/silences/".length()));
      } else {
        send(ex, 405, error("GET or POST /api/silences, DELETE /api/silences/{id}"));
      }
    } catch (BadRequest e) {
      send(ex, 400, error(e.getMessage()));
    } catch (Exception e) {
      send(ex, 500, error("silences failed: " + e.getClass().getSimpleName()));
    } finally {
      ex.close();
    }
  }

  private void list(HttpExchange ex) throws IOException {
    Instant now = Instant.now();
    ArrayNode list = Json.MAPPER.createArrayNode();
    for (Silence s : silences.all()) {
      ObjectNode o = Json.MAPPER.valueToTree(s);
      o.put("state", s.activeAt(now) ? "active" : now.isBefore(s.startsAt()) ? "pending" : "expired");
      list.add(o);
    }
    ObjectNode out = Json.MAPPER.createObjectNode();
    out.set("silences", list);
    send(ex, 200, out);
  }

  private void add(HttpExchange ex) throws Exception {
    byte[] raw = ex.getRequestBody().readNBytes(MAX_BODY + 1);
    if (raw.length > MAX_BODY) {
      throw new BadRequest("the body is over " + MAX_BODY + " bytes");
    }
    JsonNode body;
    try {
      body = Json.MAPPER.readTree(raw);
    } catch (IOException e) {
      throw new BadRequest("the body is not JSON");
    }
    if (body == null || !body.isObject()) {
      throw new BadRequest("the body is not a JSON object");
    }
    Map<String, String> matchers = new LinkedHashMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = body.path("matchers").fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> m = it.next();
      if (!Silence.FIELDS.contains(m.getKey())) {
        throw new BadRequest("matcher \"" + Sanitize.text(m.getKey(), 40) + "\" is not one of "
            + String.join(", ", Silence.FIELDS.stream().sorted().toList()));
      }
      if (!m.getValue().isTextual() || m.getValue().asText().isBlank()) {
        throw new BadRequest("matcher " + m.getKey() + " needs a value");
      }
      matchers.put(m.getKey(), Sanitize.text(m.getValue().asText(), 300));
    }
    if (matchers.isEmpty()) {
      throw new BadRequest("matchers: give at least one of " + String.join(", ", Silence.FIELDS.stream().sorted().toList()));
    }
    String comment = body.path("comment").asText("");
    if (comment.isBlank()) {
      throw new BadRequest("comment: say why");
    }
    Instant now = Instant.now();
    Instant ends;
    try {
      ends = body.hasNonNull("endsAt") ? Instant.parse(body.get("endsAt").asText())
          : now.plus(Duration.parse(body.path("duration").asText("PT2H")));
    } catch (DateTimeParseException e) {
      throw new BadRequest("endsAt is an ISO-8601 instant, duration an ISO-8601 duration (PT2H)");
    }
    if (!ends.isAfter(now)) {
      throw new BadRequest("the silence would end before it starts");
    }
    Silence s = new Silence(UUID.randomUUID().toString(), matchers, now, ends,
        Sanitize.text(body.path("createdBy").asText("api"), 100), Sanitize.text(comment, 500));
    Silences.write(producer, s);
    send(ex, 201, Json.MAPPER.valueToTree(s));
  }

  private void expire(HttpExchange ex, String id) throws Exception {
    Silence s = silences.get(id).orElse(null);
    if (s == null) {
      send(ex, 404, error("no silence " + Sanitize.text(id, 80)));
      return;
    }
    Silence ended = s.expiredAt(Instant.now());
    Silences.write(producer, ended);
    send(ex, 200, Json.MAPPER.valueToTree(ended));
  }

  private static ObjectNode error(String message) {
    return Json.MAPPER.createObjectNode().put("error", message);
  }

  private static void send(HttpExchange ex, int status, JsonNode body) throws IOException {
    byte[] bytes = body.toString().getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", "application/json; charset=utf-8");
    ex.getResponseHeaders().set("Cache-Control", "no-store");
    ex.sendResponseHeaders(status, bytes.length);
    try (OutputStream os = ex.getResponseBody()) {
      os.write(bytes);
    }
  }

  private static final class BadRequest extends RuntimeException {
    BadRequest(String message) {
      super(message);
    }
  }

  @Override
  public synchronized void close() {
    producer.close(java.time.Duration.ofSeconds(5));
    silences.close();
  }
}
