package dev.knockwatch.probes.claudecode;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.knockwatch.events.Json;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.List;
import java.util.concurrent.Executors;

/**
 * A local stand-in for the Anthropic Messages API that plays a model running a script: Claude
 * Code pointed at it ({@code ANTHROPIC_BASE_URL}) runs the scripted Bash calls one by one, in its
 * real sandbox, with its hooks, and no model or network is involved. Each turn of a conversation
 * whose tools include Bash gets the next call of the script as a {@code tool_use} (streamed as
 * {@code message_start}, {@code content_block_start}, {@code input_json_delta},
 * {@code message_delta} with {@code stop_reason: tool_use}, {@code message_stop}); once as many
 * {@code tool_result}s came back as the script has calls, a text turn ends it ({@code end_turn}).
 * Any other request (a title, a quota check) gets a short text answer. Listens on 127.0.0.1 only.
 */
public final class MessagesStandIn implements AutoCloseable {

  /** One Bash call the model makes: its command, and whether it asks to run outside the sandbox. */
  public record BashCall(String command, String description, boolean disableSandbox) {
    public static BashCall of(String command) {
      return new BashCall(command, "knockwatch scripted call", false);
    }
  }

  private static final String ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  private final SecureRandom random = new SecureRandom();
  private final HttpServer server;
  private final List<BashCall> script;

  public MessagesStandIn(List<BashCall> script) throws IOException {
    this.script = List.copyOf(script);
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
    server.setExecutor(Executors.newFixedThreadPool(2, r -> {
      Thread t = new Thread(r, "messages-stand-in");
      t.setDaemon(true);
      return t;
    }));
    server.createContext("/", this::handle);
    server.start();
  }

  /** {@code http://127.0.0.1:PORT}: what {@code ANTHROPIC_BASE_URL} is set to. */
  public String baseUrl() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  public int port() {
    return server.getAddress().getPort();
  }

  private void handle(HttpExchange x) throws IOException {
    try (x) {
      byte[] body = x.getRequestBody().readAllBytes();
      String path = x.getRequestURI().getPath();
      if (!"POST".equals(x.getRequestMethod()) || !path.startsWith("/v1/messages")) {
        send(x, 404, "application/json", "{\"type\":\"error\",\"error\":{\"type\":\"not_found_error\",\"message\":\"not here\"}}");
        return;
      }
      if (path.startsWith("/v1/messages/count_tokens")) {
        send(x, 200, "application/json", "{\"input_tokens\":10}");
        return;
      }
      JsonNode request = Json.MAPPER.readTree(body);
      boolean bash = false;
      for (JsonNode tool : request.path("tools")) {
        bash |= "Bash".equals(tool.path("name").asText());
      }
      int results = 0;
      for (JsonNode m : request.path("messages")) {
        for (JsonNode c : m.path("content")) {
          if ("tool_result".equals(c.path("type").asText())) {
            results++;
          }
        }
      }
      String model = request.path("model").asText("stand-in");
      StringBuilder sse = new StringBuilder();
      ObjectNode message = Json.MAPPER.createObjectNode();
      message.put("id", "msg_" + id(24)).put("type", "message").put("role", "assistant").put("model", model)
          .putNull("stop_reason").putNull("stop_sequence");
      message.putArray("content");
      message.putObject("usage").put("input_tokens", 10).put("output_tokens", 1);
      event(sse, "message_start", Json.MAPPER.createObjectNode().put("type", "message_start").set("message", message));
      String stop;
      if (bash && results < script.size()) {
        BashCall call = script.get(results);
        ObjectNode block = Json.MAPPER.createObjectNode().put("type", "tool_use").put("id", "toolu_01" + id(22))
            .put("name", "Bash");
        block.putObject("input");
        event(sse, "content_block_start", Json.MAPPER.createObjectNode().put("type", "content_block_start").put("index", 0)
            .set("content_block", block));
        ObjectNode input = Json.MAPPER.createObjectNode().put("command", call.command()).put("description", call.description());
        if (call.disableSandbox()) {
          input.put("dangerouslyDisableSandbox", true);
        }
        event(sse, "content_block_delta", Json.MAPPER.createObjectNode().put("type", "content_block_delta").put("index", 0)
            .set("delta", Json.MAPPER.createObjectNode().put("type", "input_json_delta")
                .put("partial_json", input.toString())));
        stop = "tool_use";
      } else {
        ObjectNode block = Json.MAPPER.createObjectNode().put("type", "text").put("text", "");
        event(sse, "content_block_start", Json.MAPPER.createObjectNode().put("type", "content_block_start").put("index", 0)
            .set("content_block", block));
        event(sse, "content_block_delta", Json.MAPPER.createObjectNode().put("type", "content_block_delta").put("index", 0)
            .set("delta", Json.MAPPER.createObjectNode().put("type", "text_delta").put("text", "done")));
        stop = "end_turn";
      }
      event(sse, "content_block_stop", Json.MAPPER.createObjectNode().put("type", "content_block_stop").put("index", 0));
      ObjectNode delta = Json.MAPPER.createObjectNode().put("type", "message_delta");
      delta.putObject("delta").put("stop_reason", stop).putNull("stop_sequence");
      delta.putObject("usage").put("output_tokens", 5);
      event(sse, "message_delta", delta);
      event(sse, "message_stop", Json.MAPPER.createObjectNode().put("type", "message_stop"));
      send(x, 200, "text/event-stream", sse.toString());
    } catch (RuntimeException e) {
      send(x, 400, "application/json", "{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"bad request\"}}");
    }
  }

  private static void event(StringBuilder sse, String type, JsonNode data) {
    sse.append("event: ").append(type).append('\n').append("data: ").append(data).append("\n\n");
  }

  private static void send(HttpExchange x, int status, String type, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    x.getResponseHeaders().set("Content-Type", type);
    x.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = x.getResponseBody()) {
      out.write(bytes);
    }
  }

  private String id(int n) {
    StringBuilder b = new StringBuilder(n);
    for (int i = 0; i < n; i++) {
      b.append(ALPHABET.charAt(random.nextInt(ALPHABET.length())));
    }
    return b.toString();
  }

  @Override
  public void close() {
    server.stop(0);
    ((java.util.concurrent.ExecutorService) server.getExecutor()).shutdownNow();
  }
}
