package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Topics;
import dev.knockwatch.notify.webhook.WebhookNotifier;
import dev.knockwatch.testkit.HttpRecorder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Past one machine (issue 66): the three-node cluster docker-compose.yml declares
 * ({@link KafkaCluster}), its topics made by {@code ./knockwatch topics} as for production, and
 * knockwatch as separate processes against it, as a deployment runs them: {@code ingest}, two
 * {@code streams} instances with a standby replica each, two {@code notify} instances in one
 * group, a webhook receiver. Under a steady load of refusals over 60 commands, the node leading
 * the most partitions of the violations topic is killed with SIGKILL, then started again. Every
 * line reaches the violations topic once, every refusal the timeline once; each command's
 * off-role page and retry warning are written once each and delivered to the receiver once each,
 * none marked a possible repeat. The time from the kill to the next page and the time the topics
 * stayed under-replicated are printed (docs/RELIABILITY.md).
 */
@Tag("integration")
@Tag("cluster")
class ClusterFailoverTest {

  static final String TOKEN = "cluster-failover-token-0001";
  static final int COMMANDS = 60;
  static final int ROUNDS = 600;
  /** One line a command a round, every 40 ms: 1,500 lines/s for 24 s. */
  static final Duration ROUND = Duration.ofMillis(40);
  static final int KILL_AT_ROUND = 100;
  static final Duration DOWN = Duration.ofSeconds(15);

  @TempDir Path dir;

  @Test
  void theViolationsLeaderKilledUnderLoadLosesNothingWritesNothingTwiceAndPagesOnce() throws Exception {
    Path checkout = Launched.copyOfRepository(dir.resolve("checkout"));
    Path receivers = Files.createDirectories(dir.resolve("receivers"));
    Path logs = Files.createDirectories(dir.resolve("logs/ci-runner-1"));
    try (KafkaCluster kafka = KafkaCluster.start(dir.resolve("kafka"));
        HttpRecorder soc = new HttpRecorder();
        Admin admin = kafka.admin()) {
      String bootstrap = kafka.bootstrapServers();
      try (Launched topics = Launched.start(checkout, dir.resolve("topics"), Map.of(), "topics", "--bootstrap-servers",
          bootstrap)) {
        assertThat(topics.awaitExit(Duration.ofMinutes(2))).as(topics.err()).isZero();
      }
      List<String> keyed = List.of(Topics.VIOLATIONS.name(), Topics.ALERTS.name(), Topics.NOTIFICATIONS.name());
      Map<String, TopicDescription> described = admin.describeTopics(keyed).allTopicNames().get(30, TimeUnit.SECONDS);
      assertThat(described.values()).allSatisfy(d -> assertThat(d.partitions()).allSatisfy(p ->
          assertThat(p.replicas()).as(d.name()).hasSize(3)));
      Config config = admin.describeConfigs(List.of(new ConfigResource(ConfigResource.Type.TOPIC,
          Topics.VIOLATIONS.name()))).all().get(30, TimeUnit.SECONDS).values().iterator().next();
      assertThat(config.get("min.insync.replicas").value()).isEqualTo("2");

      Files.writeString(receivers.resolve("receivers.yaml"), """
          receivers:
            - {name: hook, type: webhook, url: "%s"}
          routes:
            - receivers: [hook]
          """.formatted(soc.url("/hook")));
      int apiA = Launched.freePort();
      List<Launched> stages = new ArrayList<>();
      try {
        for (String name : List.of("streams-a", "streams-b")) {
          stages.add(Launched.start(checkout, dir.resolve(name), Map.of("KNOCKWATCH_API_TOKEN", TOKEN), "streams",
              "--bootstrap-servers", bootstrap, "--var", dir.resolve(name + "-var").toString(), "--api-port",
              String.valueOf(name.equals("streams-a") ? apiA : Launched.freePort()), "--metrics-port",
              String.valueOf(Launched.freePort()), "--streams-config", "num.standby.replicas=1"));
        }
        for (String name : List.of("notify-a", "notify-b")) {
          stages.add(Launched.start(checkout, dir.resolve(name), Map.of(), "notify", "--bootstrap-servers", bootstrap,
              "--rules", receivers.toString(), "--metrics-port", String.valueOf(Launched.freePort())));
        }
        stages.add(Launched.start(checkout, dir.resolve("ingest"), Map.of(), "ingest", "--bootstrap-servers", bootstrap,
            "--logs", logs.getParent().toString(), "--var", dir.resolve("ingest-var").toString(), "--metrics-port", "0"));
        List<String> banners = List.of("knockwatch streams:", "knockwatch streams:", "knockwatch notify:",
            "knockwatch notify:", "knockwatch ingest:");
        for (int i = 0; i < stages.size(); i++) {
          stages.get(i).awaitLine(banners.get(i), Duration.ofMinutes(3));
        }
        Launched streamsA = stages.get(0);

        List<String> commands = new ArrayList<>();
        for (int c = 0; c < COMMANDS; c++) {
          commands.add(String.format("ClusterFailover%07d", c));
        }
        int killed = -1;
        Instant killedAt = null;
        Instant restartedAt = null;
        // from the kill, when every partition of knockwatch's topics has all its replicas in sync again
        List<String> all = Topics.ALL.stream().map(Topics.Topic::name).toList();
        java.util.concurrent.atomic.AtomicReference<Instant> inSync = new java.util.concurrent.atomic.AtomicReference<>();
        Thread replicas = new Thread(() -> {
          try {
            // the controller takes the dead node out of the in-sync replicas once it fences it
            while (kafka.underReplicated(admin, all).isEmpty()) {
              Thread.sleep(250);
            }
            while (!kafka.underReplicated(admin, all).isEmpty()) {
              Thread.sleep(250);
            }
            inSync.set(Instant.now());
          } catch (Exception e) {
            // the test ends first; its figure is then missing
          }
        }, "under-replicated");
        replicas.setDaemon(true);
        Instant started = Instant.now();
        for (int round = 0; round < ROUNDS; round++) {
          if (round == KILL_AT_ROUND) {
            killed = kafka.leaderOfMost(admin, Topics.VIOLATIONS.name());
            kafka.kill(killed);
            killedAt = Instant.now();
            replicas.start();
          }
          if (killedAt != null && restartedAt == null && Instant.now().isAfter(killedAt.plus(DOWN))) {
            kafka.restart(killed);
            restartedAt = Instant.now();
          }
          Instant at = Instant.now();
          for (String cmd : commands) {
            Files.writeString(logs.resolve(cmd + ".violations.jsonl"), "{\"line\":\"deny network-outbound evil.example:443"
                + " (host is not on the allow list)\",\"commandId\":\"" + cmd + "\",\"timestamp\":\"" + at + "\"}\n",
                StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
          }
          Thread.sleep(Math.max(0, started.plus(ROUND.multipliedBy(round + 1)).toEpochMilli() - System.currentTimeMillis()));
        }
        if (restartedAt == null) {
          Thread.sleep(Math.max(0, killedAt.plus(DOWN).toEpochMilli() - System.currentTimeMillis()));
          kafka.restart(killed);
          restartedAt = Instant.now();
        }
        int lines = COMMANDS * ROUNDS;

        // every line once on the violations topic
        List<ConsumerRecord<String, String>> violations = readAll(bootstrap, Topics.VIOLATIONS.name(), lines,
            Duration.ofMinutes(3));
        Map<String, Integer> byEventId = new HashMap<>();
        Map<String, Integer> perCommand = new TreeMap<>();
        for (ConsumerRecord<String, String> r : violations) {
          JsonNode e = Json.MAPPER.readTree(r.value());
          byEventId.merge(e.path("eventId").asText(), 1, Integer::sum);
          perCommand.merge(e.path("commandId").asText(), 1, Integer::sum);
        }
        assertThat(byEventId).as("events on the violations topic").hasSize(lines);
        assertThat(byEventId.values()).as("events written twice").allMatch(n -> n == 1);
        assertThat(perCommand).hasSize(COMMANDS).allSatisfy((cmd, n) -> assertThat(n).as(cmd).isEqualTo(ROUNDS));

        // every refusal in the timeline once
        Launched.awaitCaughtUp(admin, streamsA);
        for (String cmd : commands) {
          assertThat(Launched.command(apiA, TOKEN, cmd, ROUNDS).path("events").asInt()).as(cmd).isEqualTo(ROUNDS);
        }

        // each command's two alerts on the alerts topic, no value written twice
        List<ConsumerRecord<String, String>> alerts = readAll(bootstrap, Topics.ALERTS.name(), 2 * COMMANDS,
            Duration.ofMinutes(2));
        Set<String> values = new HashSet<>();
        Map<String, Set<String>> rules = new TreeMap<>();
        Map<String, String> fingerprints = new HashMap<>();
        for (ConsumerRecord<String, String> r : alerts) {
          assertThat(values.add(r.value())).as("an alert written twice: %s", r.value()).isTrue();
          JsonNode a = Json.MAPPER.readTree(r.value());
          rules.computeIfAbsent(a.path("commandId").asText(), k -> new TreeSet<>()).add(a.path("rule").asText());
          fingerprints.put(a.path("fingerprint").asText(), a.path("commandId").asText());
        }
        for (String cmd : commands) {
          assertThat(rules.get(cmd)).as(cmd).contains("off-role-host", "persistent-retry");
        }

        // each of them paged once: every alert at the receiver, each notification once, none a possible repeat
        for (String fingerprint : fingerprints.keySet()) {
          assertThat(soc.await(r -> r.body().contains(fingerprint), 1, Duration.ofMinutes(2)))
              .as(fingerprint + " delivered").isNotEmpty();
        }
        Thread.sleep(3_000);
        List<HttpRecorder.Request> sent = soc.requests("/hook");
        Map<String, Integer> byKey = new HashMap<>();
        for (HttpRecorder.Request r : sent) {
          byKey.merge(r.header(WebhookNotifier.IDEMPOTENCY_KEY), 1, Integer::sum);
          assertThat(r.header(WebhookNotifier.POSSIBLE_REPEAT)).as("a send marked as a possible repeat").isNull();
        }
        assertThat(byKey.values()).as("notifications sent twice").allMatch(n -> n == 1);

        // the figures: the first page after the kill, and how long a partition lacked a replica
        Instant firstAfterKill = null;
        for (HttpRecorder.Request r : sent) {
          if (r.at().isAfter(killedAt) && (firstAfterKill == null || r.at().isBefore(firstAfterKill))) {
            firstAfterKill = r.at();
          }
        }
        replicas.join(Duration.ofMinutes(2).toMillis());
        assertThat(inSync.get()).as("every partition in sync again, after the node came back").isNotNull();
        System.out.printf("ClusterFailoverTest: node %d (leading the most violations partitions) killed at round %d,"
            + " started again %.1f s later; %d lines, %d events, %d alert records, %d notifications; the first page"
            + " after the kill %.1f s after it; under-replicated for %.1f s%n", killed, KILL_AT_ROUND,
            Duration.between(killedAt, restartedAt).toMillis() / 1e3, lines, violations.size(), alerts.size(), sent.size(),
            firstAfterKill == null ? -1 : Duration.between(killedAt, firstAfterKill).toMillis() / 1e3,
            Duration.between(killedAt, inSync.get()).toMillis() / 1e3);
        assertThat(firstAfterKill).as("a page after the kill").isNotNull();
      } finally {
        for (Launched s : stages) {
          s.close();
        }
      }
    }
  }

  /** Every record of {@code topic}, read committed, once at least {@code atLeast} are there (or the wait ends). */
  static List<ConsumerRecord<String, String>> readAll(String bootstrap, String topic, int atLeast, Duration within) {
    Map<String, Object> props = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
        ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed", ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
        ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    List<ConsumerRecord<String, String>> out = new ArrayList<>();
    try (KafkaConsumer<String, String> c = new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer())) {
      List<TopicPartition> parts = c.partitionsFor(topic, Duration.ofSeconds(30)).stream()
          .map(p -> new TopicPartition(topic, p.partition())).toList();
      c.assign(parts);
      c.seekToBeginning(parts);
      Instant deadline = Instant.now().plus(within);
      Instant quietSince = Instant.now();
      while (Instant.now().isBefore(deadline)) {
        int before = out.size();
        c.poll(Duration.ofMillis(500)).forEach(out::add);
        if (out.size() > before) {
          quietSince = Instant.now();
        } else if (out.size() >= atLeast && Instant.now().isAfter(quietSince.plusSeconds(3))) {
          return out;
        }
      }
    }
    throw new AssertionError(out.size() + " records of " + topic + " read, " + atLeast + " awaited");
  }

}
