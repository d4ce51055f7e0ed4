package dev.knockwatch.streams.rules;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.events.config.ConfigException;
import dev.knockwatch.streams.DetectionTopology;
import dev.knockwatch.streams.lifecycle.AlertLifecycleProcessor.Clock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

/**
 * Every rule the loader takes starts detection: each shipped rule at every grain its detector
 * takes (a count also in aligned windows), alone in a policy, built into the topology and fed
 * refusals of tool calls, of a command with no task, and of a wall that names no command; then all
 * of them in one policy. A rules file that loads and then stops detection from starting would blind
 * it to every agent.
 */
class EveryGrainTest {

  static final Instant T0 = Instant.parse("2026-12-07T05:00:00Z");
  static final Path SHIPPED = Path.of("../alert-rules");

  @TempDir Path dir;

  @Test
  @SuppressWarnings("unchecked")
  void everyShippedRuleAtEveryGrainItTakesStartsAndJudges() throws Exception {
    Map<String, Object> shipped = new Yaml().load(Files.readString(SHIPPED.resolve("rules.yaml")));
    List<String> built = new ArrayList<>();
    List<String> refused = new ArrayList<>();
    List<Map<String, Object>> together = new ArrayList<>();
    for (Map<String, Object> rule : (List<Map<String, Object>>) shipped.get("rules")) {
      List<Map<String, Object>> variants = new ArrayList<>(List.of(rule));
      if ("count".equals(rule.get("detector"))) {
        Map<String, Object> aligned = new LinkedHashMap<>(rule);
        aligned.put("hop", rule.get("window"));
        variants.add(aligned);
      }
      for (Map<String, Object> variant : variants) {
        for (Grain g : Grain.values()) {
          Map<String, Object> r = new LinkedHashMap<>(variant);
          if (g == Grain.COMMAND) {
            r.remove("per"); // the default, and the only grain of a detector without per
          } else {
            r.put("per", g.wireName());
          }
          String name = r.get("id") + (r.containsKey("hop") ? "+hop" : "") + "@" + g.wireName();
          Path rules = Files.createDirectories(dir.resolve(name));
          Files.copy(SHIPPED.resolve("roles.yaml"), rules.resolve("roles.yaml"));
          Files.writeString(rules.resolve("rules.yaml"), new Yaml().dump(Map.of("rules", List.of(r))));
          Policy policy;
          try {
            policy = PolicyLoader.load(rules);
          } catch (ConfigException e) {
            assertThat(e.getMessage()).as(name).contains("\"per\" is a key of");
            refused.add(name);
            continue;
          }
          List<Alert> alerts = judge(policy, dir.resolve(name + "-state"));
          if ("count".equals(r.get("detector"))) {
            // six refusals of each: one task's tool calls, one command, one agent's packets
            assertThat(alerts).as(name).extracting(Alert::rule).contains((String) r.get("id"));
          }
          built.add(name);
          Map<String, Object> renamed = new LinkedHashMap<>(r);
          renamed.put("id", r.get("id") + (r.containsKey("hop") ? "-aligned-" : "-") + g.wireName());
          together.add(renamed);
        }
      }
    }
    // every detector that takes per, at each of the four grains; the others only at the command's
    assertThat(built).contains("persistent-retry@agent", "persistent-retry+hop@agent", "persistent-retry+hop@task",
        "scanning@session", "off-role-host@agent", "bypass@task", "sandbox-escape@session");
    assertThat(built).hasSizeGreaterThanOrEqualTo(4 * 10);
    assertThat(refused).isNotEmpty().allSatisfy(n -> assertThat(n).doesNotEndWith("@command"));
    // and all of them in one policy, as a rules directory of many rules runs: no two name one processor or store
    Path all = Files.createDirectories(dir.resolve("all"));
    Files.copy(SHIPPED.resolve("roles.yaml"), all.resolve("roles.yaml"));
    Files.writeString(all.resolve("rules.yaml"), new Yaml().dump(Map.of("rules", together)));
    Policy everything = PolicyLoader.load(all);
    assertThat(everything.rules()).hasSameSizeAs(built);
    judge(everything, dir.resolve("all-state"));
  }

  /** The alerts detection raised. */
  private static List<Alert> judge(Policy policy, Path state) {
    Properties p = DetectionTopology.streamsConfig("every-grain", "unused:9092", state, Map.of());
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
    try (TopologyTestDriver driver = new TopologyTestDriver(DetectionTopology.buildTopology(policy, Clock.STREAM), p, T0)) {
      TestInputTopic<String, ViolationEvent> in = driver.createInputTopic(Topics.VIOLATIONS.name(), new StringSerializer(),
          Json.serde(ViolationEvent.class).serializer());
      for (int i = 0; i < 6; i++) {
        Instant at = T0.plusSeconds(i);
        // a tool call of one task, a command with no task, a wall's packet that names no command
        ViolationEvent call = base(i + "-call", i, at).commandId(String.format("toolu_01%022d", i)).agentId("claude-code")
            .source("claude-code").sessionId("s-1").taskId("t-1").build();
        ViolationEvent command = base(i + "-command", i, at).commandId("SrtCommandId0000000000001").agentId("claude-code")
            .source("srt").build();
        ViolationEvent packet = base(i + "-packet", i, at).agentId("runner-1").commandUnknown(true).source("netfilter")
            .action("connect").protocol("tcp").sourceAddress("10.77.0.1").sourcePort(40_000 + i).build();
        for (ViolationEvent e : List.of(call, command, packet)) {
          in.pipeInput(e.key(), e, at);
        }
      }
      return driver.createOutputTopic(Topics.ALERTS.name(), new StringDeserializer(),
          Json.serde(Alert.class).deserializer()).readValuesToList();
    }
  }

  private static ViolationEvent.Builder base(String id, int i, Instant at) {
    return ViolationEvent.builder().eventId("e" + id).kind(Kind.NETWORK)
        .action("network-outbound").host("evil" + i + ".example").port(443).observedAt(at);
  }
}
