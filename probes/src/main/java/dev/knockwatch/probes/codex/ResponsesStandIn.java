package dev.knockwatch.probes.codex;

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
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A local stand-in for OpenAI's Responses API that plays a model running a script, so that the
 * real Codex CLI (pointed at it by a model provider: {@code base_url}, {@code wire_api =
 * "responses"}) runs the scripted {@code exec_command} calls in its real sandbox with no model or
 * network involved. {@code POST /v1/responses} answers as a stream ({@code response.created}, one
 * {@code response.output_item.done} a call, {@code response.completed}); the place in the script is
 * read from the history Codex sends with each request: the turn is the count of the user's prompts
 * (not Codex's own {@code <environment_context>}-like messages), the call the count of calls since
 * the last one. A turn's calls go one a response, or all in one ({@code parallel}, as a model's
 * parallel tool calls); when they are used up, the turn's message ends it. {@code GET
 * /v1/models} lists none. Listens on 127.0.0.1 only.
 */
public final class ResponsesStandIn implements AutoCloseable {

  /** One {@code exec_command} call: its command, and whether it asks to run outside the sandbox and why. */
  public record Call(String cmd, boolean escalated, String justification) {
    public static Call of(String cmd) {
      return new Call(cmd, false, null);
    }

    public static Call escalated(String cmd, String justification) {
      return new Call(cmd, true, justification);
    }
  }

  /** One turn: its calls, sent one a response unless {@code parallel}, then its closing message. */
  public record Turn(List<Call> calls, boolean parallel, String message) {
    public static Turn of(Call... calls) {
      return new Turn(List.of(calls), false, "done");
    }
  }

  private static final String ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  private final SecureRandom random = new SecureRandom();
  private final HttpServer server;
  private final List<Turn> turns;
  private final AtomicInteger responses = new AtomicInteger();
  /** Every call id handed out, in order: what a test asks the records about. */
  private final List<String> callIds = java.util.Collections.synchronizedList(new ArrayList<>());

  public ResponsesStandIn(List<Turn> turns) throws IOException {
    this.turns = List.copyOf(turns);
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
    server.setExecutor(Executors.newFixedThreadPool(2, r -> {
      Thread t = new Thread(r, "responses-stand-in");
      t.setDaemon(true);
      return t;
    }));
    server.createContext("/", this::handle);
    server.start();
  }

  public int port() {
    return server.getAddress().getPort();
  }

  /** {@code http://127.0.0.1:PORT/v1}: the provider's {@code base_url}. */
  public String baseUrl() {
    return "http://127.0.0.1:" + port() + "/v1";
  }

  public List<String> callIds() {
    synchronized (callIds) {
      return List.copyOf(callIds);
    }
  }

  private void handle(HttpExchange x) throws IOException {
    try (x) {
      byte[] body = x.getRequestBody().readAllBytes();
      String path = x.getRequestURI().getPath();
      if ("GET".equals(x.getRequestMethod()) && path.endsWith("/models")) {
        send(x, 200, "application/json", "{\"object\":\"list\",\"data\":[],\"models\":[]}");
        return;
      }
      if (!"POST".equals(x.getRequestMethod()) || !path.endsWith("/responses")) {
        send(x, 404, "application/json", "{\"error\":{\"message\":\"not found\"}}");
        return;
      }
      JsonNode input = Json.MAPPER.readTree(body).path("input");
      int turn = -1;
      int calls = 0;
      for (JsonNode item : input) {
        if (prompt(item)) {
          turn++;
          calls = 0;
        } else if ("function_call".equals(item.path("type").asText())) {
          calls++;
        }
      }
      Turn t = turns.isEmpty() ? new Turn(List.of(), false, "done") : turns.get(Math.min(Math.max(turn, 0), turns.size() - 1));
      List<ObjectNode> items = new ArrayList<>();
      if (t.parallel() && calls == 0 && !t.calls().isEmpty()) {
        t.calls().forEach(c -> items.add(functionCall(c)));
      } else if (!t.parallel() && calls < t.calls().size()) {
        items.add(functionCall(t.calls().get(calls)));
      } else {
        ObjectNode m = Json.MAPPER.createObjectNode().put("type", "message").put("role", "assistant")
            .put("id", "msg_" + id(24));
        m.putArray("content").addObject().put("type", "output_text").put("text", t.message());
        items.add(m);
      }
      String id = "resp_" + responses.incrementAndGet();
      StringBuilder sse = new StringBuilder();
      event(sse, "response.created", Json.MAPPER.createObjectNode().put("type", "response.created")
          .set("response", Json.MAPPER.createObjectNode().put("id", id)));
      for (int i = 0; i < items.size(); i++) {
        event(sse, "response.output_item.done", Json.MAPPER.createObjectNode().put("type", "response.output_item.done")
            .put("output_index", i).set("item", items.get(i)));
      }
      ObjectNode usage = Json.MAPPER.createObjectNode().put("input_tokens", 10).put("output_tokens", 5)
          .put("total_tokens", 15);
      usage.putObject("input_tokens_details").put("cached_tokens", 0);
      usage.putObject("output_tokens_details").put("reasoning_tokens", 0);
      event(sse, "response.completed", Json.MAPPER.createObjectNode().put("type", "response.completed")
          .set("response", Json.MAPPER.createObjectNode().put("id", id).set("usage", usage)));
      send(x, 200, "text/event-stream", sse.toString());
    } catch (IOException | RuntimeException e) {
      send(x, 400, "application/json", "{\"error\":{\"message\":\"bad request\"}}");
    }
  }

  /** A prompt of the user's: a user message that is not Codex's own context ({@code <environment_context>}, AGENTS.md). */
  private static boolean prompt(JsonNode item) {
    if (!"message".equals(item.path("type").asText()) || !"user".equals(item.path("role").asText())) {
      return false;
    }
    StringBuilder text = new StringBuilder();
    JsonNode c = item.path("content");
    if (c.isTextual()) {
      text.append(c.asText());
    } else {
      c.forEach(part -> text.append(part.path("text").asText("")));
    }
    String t = text.toString().stripLeading();
    return !t.startsWith("<") && !t.startsWith("# AGENTS.md");
  }

  private ObjectNode functionCall(Call c) {
    ObjectNode args = Json.MAPPER.createObjectNode().put("cmd", c.cmd());
    if (c.escalated()) {
      args.put("sandbox_permissions", "require_escalated");
      if (c.justification() != null) {
        args.put("justification", c.justification());
      }
    }
    String callId = "call_" + id(24);
    callIds.add(callId);
    return Json.MAPPER.createObjectNode().put("type", "function_call").put("id", "fc_" + id(16))
        .put("call_id", callId).put("name", "exec_command").put("arguments", args.toString());
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
