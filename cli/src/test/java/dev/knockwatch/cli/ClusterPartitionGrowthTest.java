package dev.knockwatch.cli;

import static dev.knockwatch.cli.ClusterFaultsTest.TOKEN;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.cli.ClusterFaultsTest.Deployment;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Topics;
import dev.knockwatch.notify.webhook.WebhookNotifier;
import dev.knockwatch.streams.PartitionGrowth;
import dev.knockwatch.testkit.HttpRecorder;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 66: past the default partition count without losing state, on the three-node cluster. Each
 * of 60 commands is three refusals into a retry storm (five page) and has its off-role page; the
 * deployment is stopped as docs/OPERATIONS.md says, {@code ./knockwatch topics --grow-to 12} moves
 * the state with its keys, and after the restart two more refusals of each command page its retry
 * storm at the fifth refusal, as if nothing had changed: the same off-role episode goes on (no
 * second first page), and the timeline shows each command's five refusals and lists all 60; two
 * changelogs raised beforehand, as a run stopped midway leaves them, change nothing of that. Refused,
 * with nothing changed: a growth while the deployment runs, and one to a count that is no multiple.
 */
@Tag("integration")
@Tag("cluster")
class ClusterPartitionGrowthTest {

  static final List<String> GROUPS = List.of("knockwatch-streams", "knockwatch-timeline", "knockwatch-notify");
  static final int BEFORE = 3;
  static final int AFTER = 2;

  @TempDir Path dir;

  @Test
  void growingThePartitionsCarriesEveryKeysStateAcrossAndPagesAsIfNothingHadChanged() throws Exception {
    try (Deployment d = Deployment.start(dir, false, null, 300, 1)) {
      int moving = (int) d.commands.stream().map(c -> c.getBytes(StandardCharsets.UTF_8))
          .filter(k -> Utils.toPositive(Utils.murmur2(k)) % 12 != Utils.toPositive(Utils.murmur2(k)) % 6).count();
      assertThat(moving).as("commands whose partition changes from 6 to 12").isGreaterThan(10);

      d.run(BEFORE, BEFORE + " refusals a command", round -> false);
      Instant lastLine = Instant.now();
      for (String cmd : d.commands) {
        assertThat(Launched.command(d.api, TOKEN, cmd, BEFORE).path("events").asInt()).as(cmd).isEqualTo(BEFORE);
      }
      try (Launched running = grow(d, "grow-running", "12")) {
        assertThat(running.awaitExit(Duration.ofMinutes(2))).as(running.err()).isEqualTo(Knockwatch.USAGE);
        assertThat(running.err()).contains("nothing was changed", "still running", "knockwatch-streams",
            "knockwatch-notify");
      }
      assertThat(partitions(d).values()).as("refused while running").containsOnly(6);

      // stopped as OPERATIONS.md says: ingest; streams once it has read everything; then notify, once it has
      Launched ingest = d.stages.get(d.stages.size() - 1);
      ingest.stop(Duration.ofMinutes(1));
      // a throttled update may still be due 30 s after the one before
      awaitRead(d, List.of("knockwatch-streams", "knockwatch-timeline"), lastLine.plusSeconds(35));
      d.streams.get(0).stop(Duration.ofMinutes(1));
      awaitRead(d, List.of("knockwatch-notify"), Instant.now());
      for (Launched stage : d.stages.subList(1, d.stages.size() - 1)) {
        stage.stop(Duration.ofMinutes(1)); // the two notifiers
      }
      assertThat(PartitionGrowth.unread(d.kafka.bootstrapServers(), Map.of(), GROUPS)).isEmpty();

      try (Launched odd = grow(d, "grow-9", "9")) {
        assertThat(odd.awaitExit(Duration.ofMinutes(2))).as(odd.err()).isEqualTo(Knockwatch.USAGE);
        assertThat(odd.err()).contains("nothing was changed", "not a multiple of the keyed topics' 6 partitions");
      }
      assertThat(partitions(d).values()).as("refused: 9 is no multiple of 6").containsOnly(6);
      // as a run stopped midway leaves them: two changelogs raised already, the sources not
      d.admin.createPartitions(Map.of("knockwatch-timeline-timeline-events-changelog", NewPartitions.increaseTo(12),
          "knockwatch-streams-detect-changelog", NewPartitions.increaseTo(12))).all().get(30, TimeUnit.SECONDS);
      Instant growing = Instant.now();
      try (Launched grow = grow(d, "grow-12", "12")) {
        assertThat(grow.awaitExit(Duration.ofMinutes(5))).as(grow.err()).isZero();
        System.out.printf("ClusterPartitionGrowthTest: topics --grow-to 12 took %.1f s (the JVM's start included) and"
            + " said:%n%s%n", Duration.between(growing, Instant.now()).toMillis() / 1e3, grow.out());
        assertThat(grow.out()).contains("grew from 6 to 12 partitions",
            "knockwatch-timeline-timeline-events-changelog: ", "knockwatch-streams-detect-changelog: ");
      }
      Map<String, Integer> grown = partitions(d);
      assertThat(grown).containsKeys(Topics.VIOLATIONS.name(), Topics.BY_GRAIN.name(), Topics.ALERTS.name(),
          Topics.NOTIFICATIONS.name(), "knockwatch-timeline-alerts-by-command-repartition",
          "knockwatch-streams-alert-lifecycle-changelog");
      assertThat(grown.values()).as(grown.toString()).containsOnly(12);
      try (Launched again = grow(d, "grow-again", "12")) {
        assertThat(again.awaitExit(Duration.ofMinutes(2))).as(again.err()).isZero();
        assertThat(again.out()).contains("nothing to do");
      }

      // started again on the same var/ directories: the checkpoints of their stores still hold
      Launched streams = d.startStreams("streams-a-again", "streams-a-var", d.api);
      d.stages.clear();
      d.streams.clear();
      d.streams.add(streams);
      d.stages.add(streams);
      d.stages.add(d.startNotify("notify-a-again"));
      d.stages.add(d.startNotify("notify-b-again"));
      d.stages.add(d.startIngest("ingest-again"));
      for (Launched stage : d.stages) {
        stage.awaitLine(stage == streams ? "knockwatch streams:" : stage == d.stages.get(3) ? "knockwatch ingest:"
            : "knockwatch notify:", Duration.ofMinutes(3));
      }
      d.run(AFTER, AFTER + " refusals more a command", round -> false);

      for (String cmd : d.commands) {
        assertThat(Launched.command(d.api, TOKEN, cmd, BEFORE + AFTER).path("events").asInt()).as(cmd)
            .isEqualTo(BEFORE + AFTER);
      }
      assertThat(listedCommands(d.api)).as("the list index built again for 12 partitions").containsAll(d.commands);

      List<ConsumerRecord<String, String>> alerts = ClusterFaultsTest.readAll(d.kafka.bootstrapServers(),
          Topics.ALERTS.name(), 3 * d.commands.size(), Duration.ofMinutes(2));
      Map<String, Long> retryAt = new TreeMap<>();
      Map<String, Set<String>> episodes = new TreeMap<>();
      Set<String> fingerprints = new HashSet<>();
      for (ConsumerRecord<String, String> r : alerts) {
        JsonNode a = Json.MAPPER.readTree(r.value());
        String what = a.path("rule").asText() + " " + a.path("commandId").asText();
        episodes.computeIfAbsent(what, k -> new TreeSet<>()).add(a.path("firstSeen").asText());
        if (a.path("rule").asText().equals("persistent-retry")) {
          retryAt.putIfAbsent(a.path("commandId").asText(), a.path("count").asLong());
          fingerprints.add(a.path("fingerprint").asText());
        }
      }
      Map<String, Long> expected = new TreeMap<>();
      d.commands.forEach(c -> expected.put(c, (long) BEFORE + AFTER));
      assertThat(retryAt).as("each command's retry storm raised at its fifth refusal, three of them before the growth")
          .isEqualTo(expected);
      for (String cmd : d.commands) {
        assertThat(episodes.get("off-role-host " + cmd)).as("one off-role episode of " + cmd).hasSize(1);
      }
      for (String fingerprint : fingerprints) {
        assertThat(d.soc.await(r -> r.body().contains(fingerprint), 1, Duration.ofMinutes(2)))
            .as(fingerprint + " delivered").isNotEmpty();
      }
      Map<String, Integer> byKey = new HashMap<>();
      for (HttpRecorder.Request r : d.soc.requests("/hook")) {
        byKey.merge(r.header(WebhookNotifier.IDEMPOTENCY_KEY), 1, Integer::sum);
      }
      assertThat(byKey.values()).as("notifications sent twice").allMatch(n -> n == 1);
    }
  }

  /** Until {@code groups} have read everything they must before a growth, and {@code notBefore} has passed. */
  private static void awaitRead(Deployment d, List<String> groups, Instant notBefore) throws Exception {
    Instant deadline = Instant.now().plus(Duration.ofMinutes(3));
    List<String> unread = PartitionGrowth.unread(d.kafka.bootstrapServers(), Map.of(), groups);
    while (!unread.isEmpty() || Instant.now().isBefore(notBefore)) {
      assertThat(Instant.now()).as("still unread: " + unread).isBefore(deadline);
      Thread.sleep(1_000);
      unread = PartitionGrowth.unread(d.kafka.bootstrapServers(), Map.of(), groups);
    }
  }

  private static Launched grow(Deployment d, String name, String to) throws Exception {
    return Launched.start(d.checkout, d.dir.resolve(name), Map.of(), "topics", "--bootstrap-servers",
        d.kafka.bootstrapServers(), "--grow-to", to);
  }

  /** The partitions of the keyed topics and of both apps' internal topics. */
  private static Map<String, Integer> partitions(Deployment d) throws Exception {
    Set<String> names = new TreeSet<>(d.admin.listTopics().names().get(30, TimeUnit.SECONDS));
    names.removeIf(n -> !n.startsWith("knockwatch-") && !List.of(Topics.VIOLATIONS.name(), Topics.BY_GRAIN.name(),
        Topics.ALERTS.name(), Topics.NOTIFICATIONS.name()).contains(n));
    Map<String, Integer> out = new TreeMap<>();
    for (TopicDescription t : d.admin.describeTopics(names).allTopicNames().get(30, TimeUnit.SECONDS).values()) {
      out.put(t.name(), t.partitions().size());
    }
    return out;
  }

  /** The command ids of {@code GET /api/v1/commands}, asked again while the index is built (503). */
  private static Set<String> listedCommands(int api) throws Exception {
    Instant deadline = Instant.now().plusSeconds(90);
    while (true) {
      HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
              URI.create("http://127.0.0.1:" + api + "/api/v1/commands?limit=500"))
          .header("Authorization", "Bearer " + TOKEN).timeout(Duration.ofSeconds(30)).build(),
          HttpResponse.BodyHandlers.ofString());
      if (r.statusCode() == 200) {
        Set<String> ids = new TreeSet<>();
        Json.MAPPER.readTree(r.body()).path("commands").forEach(c -> ids.add(c.path("commandId").asText()));
        return ids;
      }
      assertThat(r.statusCode()).as(r.body()).isEqualTo(503);
      assertThat(Instant.now()).as("the list index still building: " + r.body()).isBefore(deadline);
      Thread.sleep(1_000);
    }
  }
}
