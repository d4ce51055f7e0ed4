package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Topics;
import dev.knockwatch.testkit.HttpRecorder;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issues 24 and 25, no command can bury another's page, as a user runs it: {@code ./knockwatch up}
 * with the shipped rules and a receivers.yaml whose Slack and PagerDuty are a local server (and the
 * console); one command floods 50,000 refusals, each of a host of its own, into its log while other
 * commands' single off-role refusals are appended. Each of those pages once at PagerDuty, Slack and
 * the console; the flood is one page per rule it breaks (a host outside its role, a scan of many
 * hosts), not 50,000; every refusal is published and counted. How long the pages take, idle and
 * under the flood, is printed (docs/PERFORMANCE.md), never asserted: the machines here are noisy.
 */
@Tag("integration")
class FloodFairnessTest {

  static final int FLOOD = 50_000;
  static final int VICTIMS = 3;
  static final Duration PAGE = Duration.ofMinutes(4);
  static final Pattern PUBLISHED = Pattern.compile(
      "(?m)^knockwatch_ingest_events_published_total\\{source=\"srt-violation\",?} ([0-9.E]+)$");
  static final Pattern COUNTED = Pattern.compile("(?m)^knockwatch_streams_refusals_total\\{[^}]*} ([0-9.E]+)$");
  static final String SLACK = "/services/T/B/hook";
  static final String PAGERDUTY = "/v2/enqueue";

  @TempDir Path dir;

  @Test
  void oneCommandsFloodBuriesNoOtherCommandsPage() throws Exception {
    Path checkout = Launched.copyOfRepository(dir.resolve("checkout"));
    int kafka = Launched.freePort();
    int metrics = Launched.freePort();
    int api = Launched.freePort();
    try (HttpRecorder soc = new HttpRecorder()) {
      Files.writeString(checkout.resolve("alert-rules/receivers.yaml"), """
          receivers:
            - {name: soc-slack, type: slack, webhookUrl: "%s"}
            - {name: oncall, type: pagerduty, routingKey: "R0UT1NG", url: "%s"}
            - {name: screen, type: console}
          routes:
            - match: {severity: [page, critical]}
              receivers: [oncall, soc-slack, screen]
            - match: {severity: [warning, info]}
              receivers: [soc-slack, screen]
          """.formatted(soc.url(SLACK), soc.url(PAGERDUTY)));
      try (Launched up = Launched.start(checkout, dir.resolve("run"), Map.of(), "up", "--no-probes",
          "--kafka-port", String.valueOf(kafka), "--metrics-port", String.valueOf(metrics), "--api-port", String.valueOf(api))) {
        up.awaitLine("Ctrl-C to stop.", FirstRunTest.FIRST_START);
        Path logs = checkout.resolve("var/logs");
        try (AlertWatch alerts = new AlertWatch(kafka)) {
          // a fresh up, its detection code not yet compiled: the flood is in flight longest
          List<String> victims = new ArrayList<>();
          List<String> idle = new ArrayList<>();
          for (int i = 0; i < VICTIMS; i++) {
            victims.add("IdleVictimIdleVictimC" + i);
            idle.add(page(up, alerts, logs, victims.get(i), metrics, Long.MAX_VALUE));
          }
          String flood = "FloodFloodFloodFlood0C";
          writeFlood(logs, flood);
          List<String> flooded = new ArrayList<>();
          for (int i = 0; i < VICTIMS; i++) {
            // the first victim pages while the flood is still being counted (ingest reads one
            // command's file at 5,000 lines a second: the flood takes 10 s)
            victims.add("FloodVictimFloodVictC" + i);
            flooded.add(page(up, alerts, logs, victims.get(VICTIMS + i), metrics, i == 0 ? FLOOD : Long.MAX_VALUE));
          }
          long expected = FLOOD + 2 * VICTIMS;

          // nothing of the flood is lost: every refusal published and counted. Both are awaited:
          // each is counted on a thread of its own, and either may be read a moment before the other.
          Instant deadline = Instant.now().plus(PAGE);
          String end = scrape(metrics);
          while ((sum(COUNTED, end) < expected || sum(PUBLISHED, end) < expected) && Instant.now().isBefore(deadline)) {
            Thread.sleep(500);
            end = scrape(metrics);
          }
          assertThat(sum(PUBLISHED, end)).isGreaterThanOrEqualTo(expected);
          assertThat(sum(COUNTED, end)).isGreaterThanOrEqualTo(expected);
          up.awaitLine("ALERT [WARNING] persistent-retry firing command=" + flood, PAGE);
          up.awaitLine("ALERT [PAGE] off-role-host firing command=" + flood, PAGE);
          soc.await(r -> r.path().equals(PAGERDUTY) && r.body().contains(flood), 1, PAGE);
          Thread.sleep(2_000); // anything sent late would be recorded by now

          // each victim paged once, everywhere
          List<JsonNode> triggers = soc.requests(PAGERDUTY).stream().map(HttpRecorder.Request::json)
              .filter(b -> b.path("event_action").asText().equals("trigger")).toList();
          for (String victim : victims) {
            assertThat(up.out().lines().filter(l -> l.contains(" firing command=" + victim + " "))).as(victim).hasSize(1);
            assertThat(triggers.stream().filter(b -> b.toString().contains(victim))).as(victim).hasSize(1);
            assertThat(soc.requests(SLACK).stream().filter(r -> r.body().contains(victim))).as(victim).hasSize(1);
          }
          // the flood pages once per rule it breaks: a host outside its role, and a scan of many hosts
          assertThat(triggers.stream().filter(b -> b.toString().contains(flood)).map(b -> b.at("/payload/class").asText()))
              .containsExactlyInAnyOrder("off-role-host", "scanning");
          assertThat(soc.requests(SLACK).stream().filter(r -> r.body().contains(flood)))
              .hasSizeLessThanOrEqualTo(6); // off-role, scanning and persistent-retry firing, an update or two
          List<String> report = List.of("  idle:  " + String.join("; ", idle), "  flood: " + String.join("; ", flooded));
          System.out.println("flood fairness (" + FLOOD + " refusals of one command, each of a host of its own), off-role "
              + "page latency [event on knockwatch.violations / alert on knockwatch.alerts / line on up's console, from the "
              + "line's append]:");
          report.forEach(System.out::println);
        }
      }
    }
  }

  /** One command, one file, 50,000 refusals of as many hosts at distinct milliseconds, written at once. */
  private static void writeFlood(Path logs, String flood) throws IOException {
    Instant base = Instant.now().minusSeconds(250);
    StringBuilder text = new StringBuilder(FLOOD * 240);
    for (int i = 0; i < FLOOD; i++) {
      text.append(record(flood, "h" + i + ".scan.example:443", base.plusMillis(i))).append('\n');
    }
    Files.createDirectories(logs.resolve("dev-bot-flood"));
    Files.writeString(logs.resolve("dev-bot-flood").resolve(flood + ".violations.jsonl"), text, StandardCharsets.UTF_8);
  }

  /**
   * Appends one off-role refusal of {@code victim} and waits for its page; says how long the
   * alert took to reach the alerts topic and up's console, and how much of all refusals ingest
   * had published then. Fewer than {@code countedBelow} refusals were counted when it paged.
   */
  private static String page(Launched up, AlertWatch alerts, Path logs, String victim, int metrics, long countedBelow)
      throws Exception {
    Path file = Files.createDirectories(logs.resolve("dev-bot-victim")).resolve(victim + ".violations.jsonl");
    long t0 = System.nanoTime();
    Files.writeString(file, record(victim, "exfil.evil.test:443", Instant.now()) + "\n", StandardCharsets.UTF_8,
        StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    long published = sum(PUBLISHED, scrape(metrics));
    String line = " firing command=" + victim + " ";
    Instant deadline = Instant.now().plus(PAGE);
    Long topic = null;
    Long console = null;
    Long event = null;
    long counted = 0;
    while ((topic == null || console == null) && Instant.now().isBefore(deadline)) {
      if (event == null && alerts.eventNanos(victim) != null) {
        event = alerts.eventNanos(victim) - t0;
      }
      if (topic == null && alerts.firstNanos(victim) != null) {
        topic = alerts.firstNanos(victim) - t0;
        counted = sum(COUNTED, scrape(metrics));
      }
      if (console == null && up.out().contains("ALERT [PAGE] off-role-host" + line)) {
        console = System.nanoTime() - t0;
      }
      Thread.sleep(20);
    }
    assertThat(topic).as("the alert of " + victim + " on knockwatch.alerts").isNotNull();
    assertThat(console).as("the page of " + victim + " on up's console").isNotNull();
    assertThat(counted).as("refusals counted when " + victim + " paged: the flood still in flight").isLessThan(countedBelow);
    if (event == null && alerts.eventNanos(victim) != null) {
      event = alerts.eventNanos(victim) - t0;
    }
    return String.format("%.2f s / %.2f s / %.1f s (%,d published before, %,d counted at the page)",
        event == null ? Double.NaN : event / 1e9, topic / 1e9, console / 1e9, published, counted);
  }

  static String record(String commandId, String target, Instant at) {
    return "{\"line\":\"deny network-outbound " + target + " (host is not on the allow list)\",\"encodedCommand\":\""
        + Base64.getEncoder().encodeToString(commandId.getBytes(StandardCharsets.UTF_8))
        + "\",\"command\":\"curl -s https://" + target + "\",\"timestamp\":\"" + at + "\"}";
  }

  static String scrape(int port) throws IOException, InterruptedException {
    HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
        URI.create("http://127.0.0.1:" + port + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
    return r.body();
  }

  static long sum(Pattern p, String metrics) {
    Matcher m = p.matcher(metrics);
    double total = 0;
    while (m.find()) {
      total += Double.parseDouble(m.group(1));
    }
    return (long) total;
  }

  /**
   * When each command's first alert reached knockwatch.alerts (committed), and each victim's
   * event knockwatch.violations, read by a consumer thread.
   */
  static final class AlertWatch implements AutoCloseable {
    private final Map<String, Long> first = new ConcurrentHashMap<>();
    private final Map<String, Long> events = new ConcurrentHashMap<>();
    private final Thread thread;
    private volatile boolean running = true;

    AlertWatch(int kafka) {
      Properties p = new Properties();
      p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + kafka);
      p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
      KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p, new StringDeserializer(), new StringDeserializer());
      List<TopicPartition> parts = new ArrayList<>();
      for (String topic : List.of(Topics.ALERTS.name(), Topics.VIOLATIONS.name())) {
        consumer.partitionsFor(topic, Duration.ofSeconds(30)).forEach(i -> parts.add(new TopicPartition(i.topic(), i.partition())));
      }
      consumer.assign(parts);
      consumer.seekToBeginning(parts);
      thread = new Thread(() -> {
        try (consumer) {
          while (running) {
            for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(20))) {
              long now = System.nanoTime();
              if (r.topic().equals(Topics.VIOLATIONS.name())) {
                if (r.key() != null && r.key().contains("Victim")) {
                  events.putIfAbsent(r.key(), now);
                }
                continue;
              }
              try {
                JsonNode a = Json.MAPPER.readTree(r.value());
                first.putIfAbsent(a.path("commandId").asText(), now);
              } catch (IOException e) {
                // not an alert: not this test's
              }
            }
          }
        }
      }, "alert-watch");
      thread.start();
    }

    Long eventNanos(String commandId) {
      return events.get(commandId);
    }

    Long firstNanos(String commandId) {
      return first.get(commandId);
    }

    @Override
    public void close() throws InterruptedException {
      running = false;
      thread.join(10_000);
    }
  }
}
