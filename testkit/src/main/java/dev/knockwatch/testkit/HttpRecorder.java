package dev.knockwatch.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import dev.knockwatch.events.Json;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;

/**
 * A local HTTP server on 127.0.0.1 that plays Slack (incoming webhooks and the Web API) and
 * PagerDuty in tests: it records every request and answers from a script per path, else with
 * {@code 200} and a body that suits the path ({@code {"ok":true,"ts":...}} for Slack's
 * {@code chat.*} methods).
 */
public final class HttpRecorder implements AutoCloseable {

  /** One request as received. */
  public record Request(String method, String path, Map<String, List<String>> headers, String body, Instant at,
                        String query) {
    /** The body as JSON; a body that is none fails the test. */
    public JsonNode json() {
      try {
        return Json.MAPPER.readTree(body);
      } catch (IOException e) {
        throw new AssertionError("not JSON: " + body, e);
      }
    }

    public String header(String name) {
      return headers.entrySet().stream().filter(e -> e.getKey().equalsIgnoreCase(name))
          .flatMap(e -> e.getValue().stream()).findFirst().orElse(null);
    }
  }

  /** A scripted answer. */
  public record Answer(int status, Map<String, String> headers, String body, java.time.Duration delay) {
    public Answer(int status, Map<String, String> headers, String body) {
      this(status, headers, body, java.time.Duration.ZERO);
    }

    public static Answer of(int status) {
      return new Answer(status, Map.of(), "");
    }

    /** {@code status}, sent {@code delay} after the request was read (a receiver that hangs a while). */
    public static Answer after(java.time.Duration delay, int status) {
      return new Answer(status, Map.of(), "", delay);
    }
  }

  private final HttpServer server;
  private final List<Request> requests = new CopyOnWriteArrayList<>();
  private final Map<String, Deque<Answer>> scripts = new ConcurrentHashMap<>();
  private int ts;

  public HttpRecorder() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext("/", this::handle);
    server.setExecutor(java.util.concurrent.Executors.newCachedThreadPool()); // a slow answer holds up no other
    server.start();
  }

  /** {@code http://127.0.0.1:PORT} + path. */
  public String url(String path) {
    return "http://127.0.0.1:" + server.getAddress().getPort() + path;
  }

  /** The next requests to {@code path} get these answers, in order; later ones the default. */
  public void script(String path, Answer... answers) {
    scripts.computeIfAbsent(path, k -> new ArrayDeque<>()).addAll(List.of(answers));
  }

  public List<Request> requests() {
    return List.copyOf(requests);
  }

  public List<Request> requests(String path) {
    return requests.stream().filter(r -> r.path().equals(path)).toList();
  }

  /** Waits until {@code count} requests satisfy {@code which}, or the timeout passes. */
  public List<Request> await(Predicate<Request> which, int count, Duration timeout) throws InterruptedException {
    Instant deadline = Instant.now().plus(timeout);
    while (Instant.now().isBefore(deadline)) {
      List<Request> got = requests.stream().filter(which).toList();
      if (got.size() >= count) {
        return got;
      }
      Thread.sleep(20);
    }
    return requests.stream().filter(which).toList();
  }

  /** A message chat.postMessage posted: its ts and its metadata (JSON), as conversations.history gives them back. */
  private record Posted(String ts, String metadata) {}

  private final List<Posted> posted = new CopyOnWriteArrayList<>();

  private String history() {
    StringBuilder b = new StringBuilder("{\"ok\":true,\"messages\":[");
    for (int i = posted.size() - 1; i >= 0; i--) { // newest first, as Slack
      Posted p = posted.get(i);
      b.append(i == posted.size() - 1 ? "" : ",").append("{\"type\":\"message\",\"ts\":\"").append(p.ts()).append('"');
      if (p.metadata() != null) {
        b.append(",\"metadata\":").append(p.metadata());
      }
      b.append('}');
    }
    return b.append("]}").toString();
  }

  private static Map<String, String> form(String body) {
    Map<String, String> out = new java.util.HashMap<>();
    for (String pair : body.split("&")) {
      int eq = pair.indexOf('=');
      if (eq > 0) {
        out.put(java.net.URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
            java.net.URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
      }
    }
    return out;
  }

  private void handle(HttpExchange ex) throws IOException {
    String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
    String path = ex.getRequestURI().getPath();
    requests.add(new Request(ex.getRequestMethod(), path, Map.copyOf(ex.getRequestHeaders()), body, Instant.now(),
        ex.getRequestURI().getQuery()));
    Deque<Answer> script = scripts.get(path);
    Answer a;
    synchronized (this) {
      a = script == null || script.isEmpty() ? null : script.poll();
      String messageTs = "1764460800." + String.format("%06d", ++ts);
      if (path.endsWith("chat.postMessage")) {
        posted.add(new Posted(messageTs, form(body).get("metadata"))); // posted, even if the answer is late
      }
      if (a == null && path.endsWith("conversations.history")) {
        a = new Answer(200, Map.of("Content-Type", "application/json"), history());
      }
      if (a == null) {
        a = path.contains("chat.") ? new Answer(200, Map.of("Content-Type", "application/json"),
            "{\"ok\":true,\"channel\":\"C0KNOCK\",\"ts\":\"" + messageTs + "\"}")
            : new Answer(path.contains("enqueue") ? 202 : 200, Map.of(), path.contains("enqueue")
                ? "{\"status\":\"success\",\"message\":\"Event processed\"}" : "ok");
      }
    }
    if (!a.delay().isZero()) {
      try {
        Thread.sleep(a.delay().toMillis());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    a.headers().forEach((k, v) -> ex.getResponseHeaders().add(k, v));
    byte[] out = a.body().getBytes(StandardCharsets.UTF_8);
    ex.sendResponseHeaders(a.status(), out.length == 0 ? -1 : out.length);
    try (OutputStream os = ex.getResponseBody()) {
      os.write(out);
    }
  }

  @Override
  public void close() {
    server.stop(0);
    ((java.util.concurrent.ExecutorService) server.getExecutor()).shutdownNow();
  }
}
