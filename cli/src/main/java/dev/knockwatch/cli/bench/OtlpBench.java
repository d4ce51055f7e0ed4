package dev.knockwatch.cli.bench;

import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.cli.run.UsageException;
import dev.knockwatch.events.Topics;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.InstrumentationScope;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.logs.v1.LogRecord;
import io.opentelemetry.proto.logs.v1.ResourceLogs;
import io.opentelemetry.proto.logs.v1.ScopeLogs;
import io.opentelemetry.proto.resource.v1.Resource;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The OTLP path as a user deploys it: {@code ./knockwatch ingest --otlp-port} (the launcher, its
 * own process) taking Codex's records as its exporter sends them (binary protobuf, 100 records a
 * request, two at once), into this process's embedded broker: records a second and per CPU-second
 * of the agent, then the answer's time at a steady 1,000 records a second (the answer waits for
 * Kafka); beside the file agent ({@code ./knockwatch ingest --logs}) on the same records as OTLP
 * JSON lines. Each phase waits for its exact count of events (one a refused call) on the topics.
 */
@Command(name = "otlp", mixinStandardHelpOptions = true,
    description = {"The OTLP endpoint as deployed (./knockwatch ingest --otlp-port): Codex's records a CPU-second into "
        + "Kafka, and the answer's p50/p99 at a steady rate, beside the file agent on the same records."})
final class OtlpBench implements java.util.concurrent.Callable<Integer> {

  @Mixin Report report;

  @Option(names = "--requests", defaultValue = "3000", description = "Requests of the throughput phase (default: ${DEFAULT-VALUE}).")
  int requests;

  @Option(names = "--rate", defaultValue = "1000", description = "Records a second of the steady phase (default: ${DEFAULT-VALUE}).")
  int rate;

  @Option(names = "--seconds", defaultValue = "30", description = "Length of the steady phase (default: ${DEFAULT-VALUE}).")
  int seconds;

  static final int RECORDS_PER_REQUEST = 100;
  /** A refused call: its decision, the proxy's refusal, its result, and six records of no wall (stream events, an API request). */
  static final int RECORDS_PER_CALL = 9;
  static final String TOKEN = "knockwatch-bench-otlp-token-0123456789";

  @Override
  public Integer call() throws Exception {
    String launcher = System.getProperty("knockwatch.launcher");
    if (launcher == null || !Files.isExecutable(Path.of(launcher))) {
      throw new UsageException("bench otlp runs the agent through the launcher: ./knockwatch bench otlp");
    }
    if (requests < 10 || rate < 100 || seconds < 5) {
      throw new UsageException("--requests at least 10, --rate at least 100, --seconds at least 5");
    }
    Path tmp = Files.createTempDirectory(Path.of("/var/tmp"), "knockwatch-bench-otlp-");
    Map<String, Object> out = new LinkedHashMap<>();
    try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(tmp.resolve("kafka"), 0);
         Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      broker.createTopics();
      LongSupplier published = () -> {
        try {
          return Offsets.records(admin, Topics.VIOLATIONS, Topics.REJECTED);
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      };
      List<byte[]> bodies = new ArrayList<>();
      long events = 0;
      for (int i = 0; i < requests; i++) {
        Request r = request(i);
        bodies.add(r.body());
        events += r.calls();
      }
      out.put("records", (long) requests * RECORDS_PER_REQUEST);
      out.put("eventsExpected", events);
      out.putAll(endpoint(tmp, Path.of(launcher), broker, published, bodies, events));
      out.putAll(fileAgent(tmp, Path.of(launcher), broker, published, bodies, events));
      out.put("otlpOverFileRecordsPerCpuSecond", AsDeployed.round(((Number) out.get("otlpRecordsPerCpuSecond"))
          .doubleValue() / ((Number) out.get("fileRecordsPerCpuSecond")).doubleValue()));
    } finally {
      try (var files = Files.walk(tmp)) {
        for (Path p : files.sorted(Collections.reverseOrder()).toList()) {
          Files.deleteIfExists(p);
        }
      }
    }
    report.print(out);
    return 0;
  }

  /** One request's body and the refused calls it holds. */
  record Request(byte[] body, int calls) {}

  /** A request of Codex's records: one thread, refused calls of it, as Codex's exporter groups them (by scope). */
  static Request request(int n) {
    String thread = new UUID(0x01a249e5_0000_7000L | n, 0x8000_0000_0000_0000L | n).toString();
    ScopeLogs.Builder calls = ScopeLogs.newBuilder().setScope(InstrumentationScope.newBuilder().setName("codex_otel.log_only"));
    ScopeLogs.Builder proxy = ScopeLogs.newBuilder().setScope(InstrumentationScope.newBuilder()
        .setName("codex_otel.network_proxy"));
    long t = 1_796_536_000_000_000_000L + n * 1_000_000_000L;
    int records = 1;
    calls.addLogRecords(record(t, "codex.user_prompt", thread, "prompt_length", "25"));
    int made = 0;
    while (records + RECORDS_PER_CALL <= RECORDS_PER_REQUEST) {
      String call = "call_" + Long.toString(n, 36) + "x" + "0".repeat(20) + made;
      t += 1_000_000L;
      calls.addLogRecords(record(t, "codex.tool_decision", thread, "call_id", call, "tool_name", "exec_command",
          "decision", "approved", "source", "Config"));
      proxy.addLogRecords(record(t + 100_000, "codex.network_proxy.policy_decision", thread,
          "network.policy.decision", "deny", "network.policy.reason", "not_allowed", "network.policy.source",
          "baseline_policy", "network.transport.protocol", "https_connect", "server.address", "evil.example",
          "server.port", "443", "http.request.method", "CONNECT", "execution.id", UUID.nameUUIDFromBytes(call.getBytes())
              .toString()));
      calls.addLogRecords(record(t + 200_000, "codex.tool_result", thread, "call_id", call, "tool_name", "exec_command",
          "arguments", "{\"cmd\":\"curl -sS -m 5 https://evil.example/\"}", "success", "false", "output",
          "exec_command failed: ProcessFailed { message: \"Network access to \\\"evil.example\\\" was blocked: domain is"
              + " not on the allowlist for the current sandbox mode.\" }"));
      for (int k = 0; k < RECORDS_PER_CALL - 3; k++) {
        calls.addLogRecords(record(t + 300_000 + k, k == 0 ? "codex.api_request" : "codex.sse_event", thread,
            "duration_ms", "22", "event.kind", "response.output_item.done"));
      }
      records += RECORDS_PER_CALL;
      made++;
    }
    while (records < RECORDS_PER_REQUEST) {
      calls.addLogRecords(record(t + 900_000 + records, "codex.sse_event", thread, "event.kind", "response.completed"));
      records++;
    }
    byte[] body = ExportLogsServiceRequest.newBuilder().addResourceLogs(ResourceLogs.newBuilder()
        .setResource(Resource.newBuilder().addAttributes(kv("service.name", "codex_exec"))
            .addAttributes(kv("service.version", "0.171.0")))
        .addScopeLogs(calls).addScopeLogs(proxy)).build().toByteArray();
    return new Request(body, made);
  }

  private static LogRecord record(long nanos, String name, String thread, String... attrs) {
    LogRecord.Builder b = LogRecord.newBuilder().setObservedTimeUnixNano(nanos).setSeverityNumberValue(9)
        .setSeverityText("INFO").setEventName("event otel/src/events/session_telemetry.rs:1259")
        .addAttributes(kv("event.name", name)).addAttributes(kv("event.timestamp", java.time.Instant.ofEpochSecond(0,
            nanos).toString())).addAttributes(kv("conversation.id", thread)).addAttributes(kv("app.version", "0.171.0"))
        .addAttributes(kv("originator", "codex_exec")).addAttributes(kv("model", "gpt-5.5"));
    for (int i = 0; i + 1 < attrs.length; i += 2) {
      b.addAttributes(kv(attrs[i], attrs[i + 1]));
    }
    return b.build();
  }

  private static KeyValue kv(String k, String v) {
    return KeyValue.newBuilder().setKey(k).setValue(AnyValue.newBuilder().setStringValue(v)).build();
  }

  /** The endpoint's process: the throughput of all the bodies, then the answer's time at a steady rate. */
  private Map<String, Object> endpoint(Path tmp, Path launcher, EmbeddedKafkaBroker broker, LongSupplier published,
      List<byte[]> bodies, long events) throws Exception {
    Map<String, Object> out = new LinkedHashMap<>();
    Path var = tmp.resolve("otlp-var");
    Files.createDirectories(var.resolve("otlp/tokens"));
    Files.writeString(var.resolve("otlp/tokens/bench-agent.token"), TOKEN + "\n");
    int port;
    try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Path agentOut = tmp.resolve("otlp-agent.out");
    // the endpoint alone, its client's rate bound lifted: the figure is the endpoint's, not the bound's
    Path config = tmp.resolve("otlp-sources.yaml");
    Files.writeString(config, "otlp:\n  listen: 127.0.0.1:" + port + "\n  recordsPerSecond: 1000000\n  burst: 1000000\n");
    ProcessBuilder pb = new ProcessBuilder(launcher.toString(), "ingest", "--config", config.toString(),
        "--var", var.toString(), "--bootstrap-servers", broker.bootstrapServers())
        .redirectErrorStream(true).redirectOutput(agentOut.toFile());
    pb.environment().remove("KNOCKWATCH_JAVA_OPTS");
    Process agent = pb.start();
    HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    URI uri = URI.create("http://127.0.0.1:" + port + "/v1/logs");
    try {
      awaitListening(port, agent, agentOut);
      long base = published.getAsLong();
      // warm the path (JIT, the producer's metadata) on bodies of their own, counted apart
      List<byte[]> warm = new ArrayList<>();
      long warmEvents = 0;
      for (int i = 0; i < 200; i++) {
        Request r = request(1_000_000 + i);
        warm.add(r.body());
        warmEvents += r.calls();
      }
      send(http, uri, warm, 2);
      AsDeployed.await(published, base + warmEvents, agent, agentOut);
      double cpu0 = AsDeployed.cpu(agent);
      long t0 = System.nanoTime();
      send(http, uri, bodies, 2);
      AsDeployed.await(published, base + warmEvents + events, agent, agentOut);
      double secs = (System.nanoTime() - t0) / 1e9;
      double cpu = AsDeployed.cpu(agent) - cpu0;
      long records = (long) bodies.size() * RECORDS_PER_REQUEST;
      out.put("otlpSeconds", AsDeployed.round(secs));
      out.put("otlpCpuSeconds", AsDeployed.round(cpu));
      out.put("otlpRecordsPerSecond", Math.round(records / secs));
      out.put("otlpRecordsPerCpuSecond", Math.round(records / cpu));

      // steady: rate records a second, a request every 100 records, its answer timed
      long interval = TimeUnit.SECONDS.toNanos(1) * RECORDS_PER_REQUEST / rate;
      int steadyRequests = (int) ((long) seconds * rate / RECORDS_PER_REQUEST);
      List<Long> answers = Collections.synchronizedList(new ArrayList<>());
      ExecutorService pool = Executors.newFixedThreadPool(8);
      long start = System.nanoTime();
      long steadyEvents = 0;
      List<Future<?>> sent = new ArrayList<>();
      for (int i = 0; i < steadyRequests; i++) {
        Request r = request(2_000_000 + i);
        steadyEvents += r.calls();
        long due = start + i * interval;
        long wait = due - System.nanoTime();
        if (wait > 0) {
          TimeUnit.NANOSECONDS.sleep(wait);
        }
        sent.add(pool.submit(() -> {
          long s = System.nanoTime();
          int status = post(http, uri, r.body());
          if (status != 200) {
            throw new IllegalStateException("the endpoint answered " + status);
          }
          answers.add(System.nanoTime() - s);
          return null;
        }));
      }
      for (Future<?> f : sent) {
        f.get(2, TimeUnit.MINUTES);
      }
      pool.shutdown();
      AsDeployed.await(published, base + warmEvents + events + steadyEvents, agent, agentOut);
      List<Long> sorted = new ArrayList<>(answers);
      Collections.sort(sorted);
      out.put("steadyRecordsPerSecond", rate);
      out.put("steadyRequests", sorted.size());
      out.put("answerP50Ms", AsDeployed.round(sorted.get(sorted.size() / 2) / 1e6));
      out.put("answerP99Ms", AsDeployed.round(sorted.get((int) Math.min(sorted.size() - 1, Math.ceil(sorted.size() * 0.99)
          - 1)) / 1e6));
      out.put("answerMaxMs", AsDeployed.round(sorted.get(sorted.size() - 1) / 1e6));
      out.put("otlpRssMb", AsDeployed.rssMb(agent));
    } finally {
      agent.destroy();
      agent.waitFor(30, TimeUnit.SECONDS);
    }
    return out;
  }

  /** The file agent on the same records, as OTLP JSON lines in its log directory. */
  private Map<String, Object> fileAgent(Path tmp, Path launcher, EmbeddedKafkaBroker broker, LongSupplier published,
      List<byte[]> bodies, long events) throws Exception {
    Map<String, Object> out = new LinkedHashMap<>();
    Path logs = tmp.resolve("file-logs");
    // warm first (as the endpoint was): its own records in a file of their own, then the measured file moved in
    List<byte[]> warm = new ArrayList<>();
    long warmEvents = 0;
    for (int i = 0; i < 200; i++) {
      Request r = request(3_000_000 + i);
      warm.add(r.body());
      warmEvents += r.calls();
    }
    write(Files.createDirectories(logs.resolve("bench-warm")).resolve("telemetry.otlp.jsonl"), warm);
    Path staged = Files.createDirectories(tmp.resolve("file-staged/bench-agent"));
    write(staged.resolve("telemetry.otlp.jsonl"), bodies);
    long base = published.getAsLong();
    Path agentOut = tmp.resolve("file-agent.out");
    ProcessBuilder pb = new ProcessBuilder(launcher.toString(), "ingest", "--logs", logs.toString(), "--var",
        tmp.resolve("file-var").toString(), "--bootstrap-servers", broker.bootstrapServers())
        .redirectErrorStream(true).redirectOutput(agentOut.toFile());
    pb.environment().remove("KNOCKWATCH_JAVA_OPTS");
    Process agent = pb.start();
    try {
      AsDeployed.await(published, base + warmEvents, agent, agentOut);
      double cpu0 = AsDeployed.cpu(agent);
      long t0 = System.nanoTime();
      Files.move(staged, logs.resolve("bench-agent"));
      AsDeployed.await(published, base + warmEvents + events, agent, agentOut);
      double secs = (System.nanoTime() - t0) / 1e9;
      double cpu = AsDeployed.cpu(agent) - cpu0;
      long records = (long) bodies.size() * RECORDS_PER_REQUEST;
      out.put("fileSeconds", AsDeployed.round(secs));
      out.put("fileCpuSeconds", AsDeployed.round(cpu));
      out.put("fileRecordsPerSecond", Math.round(records / secs));
      out.put("fileRecordsPerCpuSecond", Math.round(records / cpu));
      out.put("fileRssMb", AsDeployed.rssMb(agent));
    } finally {
      agent.destroy();
      agent.waitFor(30, TimeUnit.SECONDS);
    }
    return out;
  }

  private static void write(Path file, List<byte[]> bodies) throws Exception {
    try (var w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
      for (byte[] b : bodies) {
        w.write(json(ExportLogsServiceRequest.parseFrom(b)));
        w.write('\n');
      }
    }
  }

  /** A request of the bench's records in OTLP JSON, one line (the Collector's file exporter's form). */
  static String json(ExportLogsServiceRequest r) {
    com.fasterxml.jackson.databind.node.ObjectNode root = dev.knockwatch.events.Json.MAPPER.createObjectNode();
    com.fasterxml.jackson.databind.node.ArrayNode rls = root.putArray("resourceLogs");
    for (ResourceLogs rl : r.getResourceLogsList()) {
      com.fasterxml.jackson.databind.node.ObjectNode o = rls.addObject();
      attributes(o.putObject("resource"), rl.getResource().getAttributesList());
      com.fasterxml.jackson.databind.node.ArrayNode sls = o.putArray("scopeLogs");
      for (ScopeLogs sl : rl.getScopeLogsList()) {
        com.fasterxml.jackson.databind.node.ObjectNode so = sls.addObject();
        so.putObject("scope").put("name", sl.getScope().getName());
        com.fasterxml.jackson.databind.node.ArrayNode recs = so.putArray("logRecords");
        for (LogRecord lr : sl.getLogRecordsList()) {
          com.fasterxml.jackson.databind.node.ObjectNode ro = recs.addObject();
          ro.put("timeUnixNano", "0").put("observedTimeUnixNano", Long.toUnsignedString(lr.getObservedTimeUnixNano()))
              .put("severityNumber", lr.getSeverityNumberValue()).put("severityText", lr.getSeverityText())
              .put("eventName", lr.getEventName());
          attributes(ro, lr.getAttributesList());
        }
      }
    }
    return root.toString();
  }

  private static void attributes(com.fasterxml.jackson.databind.node.ObjectNode o, List<KeyValue> kvs) {
    com.fasterxml.jackson.databind.node.ArrayNode a = o.putArray("attributes");
    for (KeyValue kv : kvs) {
      a.addObject().put("key", kv.getKey()).putObject("value").put("stringValue", kv.getValue().getStringValue());
    }
  }

  private static void send(HttpClient http, URI uri, List<byte[]> bodies, int parallel) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(parallel);
    try {
      List<Future<?>> sent = new ArrayList<>();
      for (int w = 0; w < parallel; w++) {
        int from = w;
        sent.add(pool.submit(() -> {
          for (int i = from; i < bodies.size(); i += parallel) {
            int status;
            while ((status = post(http, uri, bodies.get(i))) == 429 || status == 503) {
              Thread.sleep(200);
            }
            if (status != 200) {
              throw new IllegalStateException("the endpoint answered " + status);
            }
          }
          return null;
        }));
      }
      for (Future<?> f : sent) {
        f.get(20, TimeUnit.MINUTES);
      }
    } finally {
      pool.shutdown();
    }
  }

  private static int post(HttpClient http, URI uri, byte[] body) throws Exception {
    return http.send(HttpRequest.newBuilder(uri).header("Content-Type", "application/x-protobuf")
        .header("Authorization", "Bearer " + TOKEN).POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
        HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  private static void awaitListening(int port, Process agent, Path agentOut) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
    while (System.nanoTime() < deadline && agent.isAlive()) {
      try (java.net.Socket s = new java.net.Socket("127.0.0.1", port)) {
        return;
      } catch (java.io.IOException e) {
        Thread.sleep(200);
      }
    }
    throw new IllegalStateException("the agent's OTLP endpoint did not come up:\n" + Files.readString(agentOut));
  }
}
