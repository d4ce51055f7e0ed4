package dev.knockwatch.streams.timeline;

import dev.knockwatch.events.WritableTopics;
import dev.knockwatch.streams.TimelineTopology;
import dev.knockwatch.streams.detect.CountDetector;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.StreamsApp;
import dev.knockwatch.streams.api.QueryApi;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.testkit.EmbeddedKafkaExtension;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.config.TopicConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.state.HostInfo;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The upgrade to the list indexes, as an operator meets it: a timeline whose commands store was
 * written before the index existed (its changelog holds commands, the index's holds nothing)
 * starts, indexes its commands in batches, and meanwhile its lists answer 503 with
 * {@code Retry-After: 5} and say why, while a command's own timeline answers at once. Once built,
 * a list holds every command of the old store: a list with a hole never answers 200.
 */
@Tag("integration")
@ExtendWith(EmbeddedKafkaExtension.class)
class ListsWhileIndexBuildsTest {

  private static final String APP = "index-build-api-test";
  private static final String TOKEN = "t0k3n-for-the-index-build-test";
  /** Twenty batches of the build at the least: seconds of building, against polls 20 ms apart. */
  private static final int COMMANDS = 20 * TimelineProcessor.BUILD_BATCH;
  /** One agent's commands, spread over the store: its list must hold all of them, built. */
  private static final String AGENT = "upgraded-agent";
  private static final int AGENT_EVERY = 997;
  private static final Instant T0 = Instant.parse("2026-12-01T00:00:00Z");

  @TempDir Path state;

  private static String id(int i) {
    return String.format("UpgradedTimelineCommand%06d", i);
  }

  private static String agentOf(int i) {
    return i % AGENT_EVERY == 0 ? AGENT : "ci-runner-" + (i % 5);
  }

  @Test
  void theListsSay503UntilEveryOldCommandIsIndexedWhileACommandsTimelineAnswers(EmbeddedKafkaBroker broker)
      throws Exception {
    int agentCommands = seedTheCommandsStoreOfAnEarlierVersion(broker);
    int port = dev.knockwatch.testkit.TestPorts.free();
    try (StreamsApp app = new StreamsApp(APP, broker.bootstrapServers(), state,
            TimelineTopology.build(Policy.ofRules(List.of(CountDetector.defaultRule())), Duration.ofDays(3650)),
            Map.of(StreamsConfig.APPLICATION_SERVER_CONFIG, "127.0.0.1:" + port,
                StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE));
         QueryApi api = new QueryApi(app.streams(), TOKEN, "127.0.0.1", port, new HostInfo("127.0.0.1", port))) {
      app.launch();
      String list = "/api/v1/commands?agent=" + AGENT + "&limit=500";
      List<String> statuses = new ArrayList<>();
      HttpResponse<String> building = null;
      HttpResponse<String> lookupWhileBuilding = null;
      HttpResponse<String> r = TimelineApiTest.get(api, list, TOKEN);
      Instant deadline = Instant.now().plusSeconds(180);
      while (r.statusCode() != 200 && Instant.now().isBefore(deadline)) {
        statuses.add(r.statusCode() + " retry " + r.headers().firstValue("Retry-After").orElse("-"));
        if (building == null && "5".equals(r.headers().firstValue("Retry-After").orElse(null))) {
          building = r;
          // the same moment, a command of the old store by its id: lookups do not wait for the index
          lookupWhileBuilding = TimelineApiTest.get(api, "/api/v1/commands/" + id(COMMANDS / 2 + 1), TOKEN);
        }
        Thread.sleep(20);
        r = TimelineApiTest.get(api, list, TOKEN);
      }
      assertThat(r.statusCode()).as("the list once the index is built: " + r.body()).isEqualTo(200);
      assertThat(building).as("a 503 with Retry-After: 5 while the index was built; statuses seen: " + statuses)
          .isNotNull();
      assertThat(building.statusCode()).isEqualTo(503);
      assertThat(Json.MAPPER.readTree(building.body()).path("error").asText())
          .contains("list indexes are being built");
      assertThat(lookupWhileBuilding.statusCode()).as(lookupWhileBuilding.body()).isEqualTo(200);
      assertThat(Json.MAPPER.readTree(lookupWhileBuilding.body()).path("commandId").asText())
          .isEqualTo(id(COMMANDS / 2 + 1));
      // built: the agent's list holds every one of its commands from the old store, newest first
      JsonNode commands = Json.MAPPER.readTree(r.body()).path("commands");
      assertThat(commands).hasSize(agentCommands);
      assertThat(commands.get(0).path("commandId").asText()).isEqualTo(id((COMMANDS - 1) / AGENT_EVERY * AGENT_EVERY));
    }
  }

  /**
   * What an earlier version left: the commands store's changelog with one summary per command (as
   * that version wrote them), and no index. Returns how many of the commands are {@link #AGENT}'s.
   */
  private static int seedTheCommandsStoreOfAnEarlierVersion(EmbeddedKafkaBroker broker) throws Exception {
    String changelog = APP + "-" + TimelineProcessor.COMMANDS + "-changelog";
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      // the seed checks every send below
      WritableTopics.create(admin, List.of(new NewTopic(changelog, Topics.VIOLATIONS.partitions(), (short) 1)
          .configs(Map.of(TopicConfig.CLEANUP_POLICY_CONFIG, TopicConfig.CLEANUP_POLICY_COMPACT))));
    }
    var values = Json.serde(CommandSummary.class).serializer();
    int agentCommands = 0;
    List<Future<RecordMetadata>> sent = new ArrayList<>(COMMANDS);
    try (KafkaProducer<String, byte[]> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
        broker.bootstrapServers(), ProducerConfig.LINGER_MS_CONFIG, 20,
        ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1), new StringSerializer(),
        new ByteArraySerializer())) {
      for (int i = 0; i < COMMANDS; i++) {
        Instant at = T0.plusSeconds(i);
        ViolationEvent e = ViolationEvent.builder().eventId("old-" + i).commandId(id(i)).agentId(agentOf(i))
            .source("srt-violation").kind(Kind.NETWORK).action("network-outbound").host("evil.example").port(443)
            .observedAt(at).build();
        // keyed as the violations are: the changelog partition is the command's partition
        sent.add(p.send(new ProducerRecord<>(changelog, id(i), values.serialize(changelog,
            CommandSummary.empty(id(i)).with(e, "default", at)))));
        agentCommands += AGENT.equals(agentOf(i)) ? 1 : 0;
      }
      p.flush();
    }
    for (Future<RecordMetadata> f : sent) {
      f.get(1, TimeUnit.SECONDS); // the seed itself is whole, or the test says so here
    }
    return agentCommands;
  }

}
