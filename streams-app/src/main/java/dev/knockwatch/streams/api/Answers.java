package dev.knockwatch.streams.api;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import dev.knockwatch.events.Json;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * How the API answers and reads a request: JSON bodies that are never cached, an error's body, a
 * request's query parameters and its numbers, and a request that cannot be answered as asked
 * ({@link BadRequest}, a 400 with the reason).
 */
final class Answers {

  /** The most rows a list gives, and the largest {@code limit} asked. */
  static final int MAX_LIMIT = 1000;

  private Answers() {}

  static int intParam(Map<String, String> q, String name, int dflt) {
    String v = q.get(name);
    if (v == null) {
      return dflt;
    }
    try {
      int n = Integer.parseInt(v);
      if (n < 1 || n > MAX_LIMIT) {
        throw new BadRequest(name + " is between 1 and " + MAX_LIMIT);
      }
      return n;
    } catch (NumberFormatException e) {
      throw new BadRequest(name + " is a number");
    }
  }

  static Map<String, String> query(URI uri) {
    Map<String, String> out = new HashMap<>();
    String raw = uri.getRawQuery();
    if (raw == null) {
      return out;
    }
    for (String pair : raw.split("&")) {
      int eq = pair.indexOf('=');
      if (eq > 0) {
        out.put(URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
            URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
      }
    }
    return out;
  }

  static ObjectNode error(String message) {
    return Json.MAPPER.createObjectNode().put("error", message);
  }

  static void send(HttpExchange ex, int status, ObjectNode body) throws IOException {
    sendBytes(ex, status, body.toString().getBytes(StandardCharsets.UTF_8));
  }

  static void sendBytes(HttpExchange ex, int status, byte[] body) throws IOException {
    ex.getResponseHeaders().set("Content-Type", "application/json; charset=utf-8");
    ex.getResponseHeaders().set("Cache-Control", "no-store");
    ex.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
    try (OutputStream os = ex.getResponseBody()) {
      os.write(body);
    }
  }

  /** A request this API cannot answer as asked: 400 with the reason. */
  static final class BadRequest extends RuntimeException {
    BadRequest(String message) {
      super(message);
    }
  }
}
