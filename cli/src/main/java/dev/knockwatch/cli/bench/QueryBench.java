package dev.knockwatch.cli.bench;

import picocli.CommandLine;
import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.cli.run.UsageException;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.KafkaEventSink;
import dev.knockwatch.streams.StreamsApp;
import dev.knockwatch.streams.api.QueryApi;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.TimelineTopology;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.state.HostInfo;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

@Command(name = "query", mixinStandardHelpOptions = true,
    description = {"Latency of GET /api/commands/{id} with N commands in the timeline store: loads N commands (one "
        + "event each, in the last minutes, each refused one of 2,000 hosts, after a week of 400 refusals an "
        + "hour; an alert for one in a hundred, a fifth of those firing) through the timeline app, then times "
        + "random queries one after another, the two lists the console reads every 5 s (GET "
        + "/api/v1/commands?limit=50, GET /api/v1/alerts?status=firing), the overview (GET /api/v1/overview, "
        + "the last 24 h) and allowlist discovery (GET /api/v1/allowlist, 7 days)."})
final class QueryBench implements Callable<Integer> {

  @Mixin Report report;

  @Option(names = "--commands", defaultValue = "1000000", description = "Commands to load (default: ${DEFAULT-VALUE}).")
  int commands;

  @Option(names = "--week-hours", defaultValue = "143",
      description = "Hours before the commands with 400 refusals each, for discovery's 7 days (default: ${DEFAULT-VALUE}).")
  int weekHours;

  @Option(names = "--queries", defaultValue = "2000", description = "Queries to time (default: ${DEFAULT-VALUE}).")
  int queries;

  @Option(names = "--list-queries", defaultValue = "20",
      description = "Requests of each list endpoint to time, after 3 not counted (default: ${DEFAULT-VALUE}).")
  int listQueries;

  /** The host command {@code i} was refused: one of 2,000, some far more often than others. */
  static String host(int i) {
    int h = (int) ((long) i * i % 2000);
    return "h" + h + ".bench.example";
  }

  /** The refusals of discovery's week, before the N commands. */
  int weekRefusals;

  static String id(int i) {
    return String.format("BenchQueryCommand%05d", i);
  }

  @Override
  public Integer call() throws Exception {
    if (commands < 1 || queries < 1) {
      throw new UsageException("--commands and --queries must be at least 1");
    }
    Path tmp = Files.createTempDirectory("knockwatch-bench-query-");
    try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(tmp.resolve("kafka"), 0)) {
      broker.createTopics();
      // a first batch sent before its partition has a leader, retried behind later ones, came back out
      // of sequence and was lost (a CI run): every leader first, as TimelineApiTest's seed does
      try (org.apache.kafka.clients.admin.Admin admin = org.apache.kafka.clients.admin.Admin.create(Map.of(
          org.apache.kafka.clients.admin.AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
        dev.knockwatch.events.WritableTopics.awaitWritable(admin, List.of(Topics.VIOLATIONS.name(), Topics.ALERTS.name()));
      }
      // and until each partition's leader takes a record (the metadata names a leader a moment before
      // it does): one empty record each, one at a time, which the timeline leaves out
      try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
          broker.bootstrapServers(), ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1),
          new StringSerializer(), new StringSerializer())) {
        for (String topic : List.of(Topics.VIOLATIONS.name(), Topics.ALERTS.name())) {
          for (int part = 0; part < p.partitionsFor(topic).size(); part++) {
            p.send(new ProducerRecord<>(topic, part, "bench-warm-up", null)).get();
          }
        }
      }
      long t0 = System.nanoTime();
      // the N commands in the last minutes, one a millisecond; before them, a week of discovery's
      // hours: in each of the 143 hours before, 400 refusals of 400 of the hosts, all within one minute
      // of the hour (stream time racing through days of minutes would open and drop a RocksDB segment
      // of the duplicate-id store for every minute: a cost of the replay, not of the queries)
      Instant now = Instant.now();
      Instant base = now.minusMillis(commands + 60_000L);
      long spacing = 1;
      Instant baseHour = base.truncatedTo(java.time.temporal.ChronoUnit.HOURS);
      try (KafkaEventSink sink = KafkaEventSink.create(broker.bootstrapServers(), Map.of())) {
        int w = 0;
        for (int h = weekHours; h >= 1; h--) {
          Instant hour = baseHour.minus(Duration.ofHours(h));
          for (int k = 0; k < 400; k++, w++) {
            sink.publish(ViolationEvent.builder().eventId("w" + w).commandId(String.format("BenchWeekCommand%06d", w))
                .agentId("ci-runner-" + (w % 100)).source("srt-violation").kind(Kind.NETWORK)
                .action("network-outbound").host(host(w)).port(443).reason("host is not on the allow list")
                .observedAt(hour.plusSeconds(1800).plusMillis(k)).ingestedAt(base).build());
          }
        }
        weekRefusals = w;
        for (int i = 0; i < commands; i++) {
          sink.publish(ViolationEvent.builder().eventId("q" + i).commandId(id(i))
              .agentId("ci-runner-" + (i % 100)).source("srt-violation")
              .kind(Kind.NETWORK).action("network-outbound").host(host(i)).port(443)
              .reason("host is not on the allow list").observedAt(base.plusMillis(i * spacing)).ingestedAt(base).build());
        }
        sink.flush();
      }
      // an alert for one command in a hundred, a fifth of them still firing: the lists' haystack
      int alerts = 0;
      try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
          broker.bootstrapServers()), new StringSerializer(), new StringSerializer())) {
        for (int i = 0; i < commands; i += 100, alerts++) {
          Instant at = base.plusMillis(i * spacing);
          Alert a = new Alert(Alert.fingerprintOf("bench-rule", id(i)), "bench-rule",
              alerts % 2 == 0 ? Alert.Severity.PAGE : Alert.Severity.WARNING,
              alerts % 5 == 0 ? Alert.Status.FIRING : Alert.Status.RESOLVED, id(i), "ci-runner-" + (i % 100), null,
              "evil.example", 443, 1, null, null, at, at, "refused evil.example:443", List.of(), null, null, null, null,
              null, null);
          p.send(new ProducerRecord<>(Topics.ALERTS.name(), a.fingerprint(), Json.write(a)));
        }
      }
      int port;
      try (ServerSocket s = new ServerSocket(0)) {
        port = s.getLocalPort();
      }
      String token = "bench-query-token-0123456789";
      try (StreamsApp app = new StreamsApp("bench-timeline",
              broker.bootstrapServers(), tmp.resolve("timeline"),
              TimelineTopology.build(
                  Policy.ofRules(List.of()), Duration.ofDays(3650)),
              Map.of(StreamsConfig.APPLICATION_SERVER_CONFIG, "127.0.0.1:" + port));
           QueryApi api = new QueryApi(app.streams(), token,
               "127.0.0.1", port, new HostInfo("127.0.0.1", port))) {
        app.start(Duration.ofSeconds(120));
        app.awaitCaughtUp(Duration.ofMinutes(30));
        double loadSeconds = (System.nanoTime() - t0) / 1e9;
        HttpClient http = HttpClient.newHttpClient();
        Random random = new Random(1);
        List<Long> micros = new ArrayList<>();
        for (int q = -200; q < queries; q++) { // the first 200 warm up the JIT and are not counted
          HttpRequest req = HttpRequest.newBuilder(
                  URI.create("http://127.0.0.1:" + port + "/api/v1/commands/" + id(random.nextInt(commands))))
              .header("Authorization", "Bearer " + token).GET().build();
          long s0 = System.nanoTime();
          HttpResponse<String> r = http.send(req, HttpResponse.BodyHandlers.ofString());
          long us = (System.nanoTime() - s0) / 1000;
          if (r.statusCode() != 200) {
            throw new IllegalStateException("query answered " + r.statusCode() + ": " + r.body());
          }
          if (q >= 0) {
            micros.add(us);
          }
        }
        Collections.sort(micros);
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("commands", commands);
        result.put("alerts", alerts);
        result.put("weekRefusals", weekRefusals);
        result.put("queries", queries);
        result.put("loadSeconds", Math.round(loadSeconds * 10) / 10.0);
        result.put("p50Ms", Stats.percentile(micros, 50) / 1000.0);
        result.put("p99Ms", Stats.percentile(micros, 99) / 1000.0);
        result.put("maxMs", micros.get(micros.size() - 1) / 1000.0);
        // the console's two (every 5 s), and two an analyst narrows: one agent's commands, a range's resolved alerts
        for (String[] list : new String[][] {{"listCommands", "/api/v1/commands?limit=50&probes=false"},
            {"listAlerts", "/api/v1/alerts?status=firing&probes=false&limit=500"},
            {"listAgentCommands", "/api/v1/commands?limit=50&agent=ci-runner-7"},
            {"listResolvedInRange", "/api/v1/alerts?status=resolved&limit=500&since="
                + base.plusMillis(commands / 2 * spacing) + "&until=" + base.plusMillis(commands / 2 * spacing + 60_000)},
            {"overview", "/api/v1/overview?since=24h"},
            {"allowlistRole", "/api/v1/allowlist?since=7d&role=" + Policy.DEFAULT_ROLE},
            {"allowlistAll", "/api/v1/allowlist?since=7d&limit=1000"}}) {
          List<Long> listMicros = new ArrayList<>();
          int rows = 0;
          int timed = list[0].startsWith("allowlist") || list[0].equals("overview") ? Math.max(listQueries, 100) : listQueries;
          for (int q = -3; q < timed; q++) {
            HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + list[1]))
                .header("Authorization", "Bearer " + token).GET().build();
            long s0 = System.nanoTime();
            HttpResponse<String> r = http.send(req, HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
              throw new IllegalStateException(list[1] + " answered " + r.statusCode() + ": " + r.body());
            }
            if (q >= 0) {
              listMicros.add((System.nanoTime() - s0) / 1000);
            }
            JsonNode body = Json.MAPPER.readTree(r.body());
            rows = list[1].contains("/allowlist") ? body.path("roles").path(0).path("hosts").size()
                : list[1].contains("/overview") ? body.path("minutes").asInt()
                : body.path(list[1].contains("/alerts") ? "alerts" : "commands").size();
          }
          Collections.sort(listMicros);
          result.put(list[0] + "P50Ms", Stats.percentile(listMicros, 50) / 1000.0);
          result.put(list[0] + "P99Ms", Stats.percentile(listMicros, 99) / 1000.0);
          result.put(list[0] + "Rows", rows);
        }
        report.print(result);
      }
    } finally {
      EmbeddedKafkaBroker.wipe(tmp);
    }
    return CommandLine.ExitCode.OK;
  }
}
