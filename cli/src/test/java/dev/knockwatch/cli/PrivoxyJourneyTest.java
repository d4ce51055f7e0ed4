package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.RejectedLine;
import dev.knockwatch.events.Topics;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/WALLS.md's privoxy section, in a copy of the repository, as root: its
 * sources file, {@code ./knockwatch up --sources var/privoxy.yaml}, then its demo verbatim — Debian's
 * privoxy, started by the demo in a fresh network namespace holding only {@code lo}, blocking
 * everything with {@code debug 2} and {@code debug 1024}, and curl refused through it from a mapped
 * address twelve times and from an unmapped one once. The mapped agent pages (off-role-host and
 * persistent-retry) under its agent's key with every refusal in its timeline; the unmapped address
 * pages once as an ingest reject, its refusal kept whole as the log's one rejected line. Then the
 * stop block ends the privoxy and the namespace.
 */
@Tag("integration")
class PrivoxyJourneyTest {

  static final Duration START = Duration.ofMinutes(3);
  static final Duration ALERT = Duration.ofMinutes(2);
  static final String TOKEN = "privoxy-journey-token-00001";

  @TempDir Path dir;

  @Test
  void privoxysRefusalsOfAMappedClientPageForItsAgentAndAnUnmappedClientPagesOnceThroughUp() throws Exception {
    for (String tool : List.of("privoxy", "ip", "curl")) {
      assertThat(new ProcessBuilder("sh", "-c", "command -v " + tool + " || test -x /usr/sbin/" + tool).start().waitFor())
          .as("%s is installed (./knockwatch test installs privoxy)", tool).isZero();
    }
    assertThat(new ProcessBuilder("id", "-u").start().getInputStream().readAllBytes()).asString()
        .as("the demo runs as root").startsWith("0");
    Path checkout = Launched.copyOfRepository(dir.resolve("checkout"));
    ReadmeBlocks readme = ReadmeBlocks.read("docs/WALLS.md");
    ReadmeBlocks.Ran sources = ReadmeBlocks.run(ReadmeBlocks.read().starting("sh", "mkdir -p var/privoxy"), checkout,
        Map.of());
    assertThat(sources.exit()).as(sources.output()).isZero();
    int api = Launched.freePort();
    int kafka = Launched.freePort();
    try (Launched up = Launched.start(checkout, dir.resolve("run"), Map.of("KNOCKWATCH_API_TOKEN", TOKEN), "up",
        "--sources", "var/privoxy.yaml", "--no-probes", "--kafka-port", String.valueOf(kafka),
        "--metrics-port", String.valueOf(Launched.freePort()), "--api-port", String.valueOf(api))) {
      up.awaitLine("Ctrl-C to stop.", START);
      assertThat(up.out()).contains("and the sources of var/privoxy.yaml");
      ReadmeBlocks.Block stop = readme.starting("sh", "kill \"$(cat var/privoxy/privoxy.pid)\"");
      try {
        ReadmeBlocks.Ran demo = ReadmeBlocks.run(readme.starting("sh", "ip netns add agent-px"), checkout, Map.of());
        assertThat(demo.exit()).as(demo.output()).isZero();
        String log = Files.readString(checkout.resolve("var/privoxy/logfile"));
        assertThat(log).contains("Connect: Accepted connection from 10.79.0.2", "Crunch: Blocked: http://evil.example/",
            "Crunch: Blocked: evil.example:443", "Connect: Accepted connection from 10.79.0.9");

        String offRole = up.awaitLine("ALERT [PAGE] off-role-host firing command=agent:sandbox-runner-1 ", ALERT);
        assertThat(offRole).contains("agent=sandbox-runner-1", "role=default", "host=evil.example");
        up.awaitLine("ALERT [WARNING] persistent-retry firing command=agent:sandbox-runner-1 ", ALERT);
        String rejects = up.awaitLine("ALERT [PAGE] ingest-rejects firing", ALERT);
        assertThat(rejects).contains("privoxy src=10.79.0.9", "unmapped-identity");
        // the unmapped client's refusal is kept whole as a rejected line, and it is the log's only one
        assertThat(rejected(kafka)).singleElement().satisfies(r -> {
          assertThat(r.code()).isEqualTo("unmapped-identity");
          assertThat(r.line()).contains("Crunch: Blocked: http://evil.example/");
          assertThat(r.reason()).contains("privoxy src=10.79.0.9");
        });

        // every refusal of the mapped client is in its agent's timeline: none lost, none invented
        JsonNode timeline = Launched.command(api, TOKEN, "agent:sandbox-runner-1", 12);
        assertThat(timeline.path("commandId").asText()).isEqualTo("agent:sandbox-runner-1");
        assertThat(timeline.path("events").asInt()).isEqualTo(12);
        assertThat(timeline.path("sources").path("privoxy").asInt()).isEqualTo(12);
        assertThat(timeline.path("timeline")).isNotEmpty().allSatisfy(e -> {
          assertThat(e.path("source").asText()).isEqualTo("privoxy");
          assertThat(e.path("commandUnknown").asBoolean()).isTrue();
          assertThat(e.path("subject").path("identity").asText()).isEqualTo("src=10.79.0.2");
          assertThat(e.path("host").asText()).isEqualTo("evil.example");
          assertThat(e.has("commandId")).isFalse();
        });
      } finally {
        ReadmeBlocks.Ran stopped = ReadmeBlocks.run(stop, checkout, Map.of());
        assertThat(stopped.exit()).as(stopped.output()).isZero();
      }
      assertThat(new String(new ProcessBuilder("ip", "netns", "list").start().getInputStream().readAllBytes()))
          .doesNotContain("agent-px");
      up.stop(Duration.ofSeconds(90));
      assertThat(up.out().lines().filter(l -> l.contains("ALERT [PAGE] ingest-rejects firing")).count())
          .as("the unmapped client pages once").isEqualTo(1);
    }
  }

  /** Every line on the rejected topic of up's broker, to its end as it is now. */
  private static List<RejectedLine> rejected(int kafka) {
    List<RejectedLine> lines = new ArrayList<>();
    TopicPartition p = new TopicPartition(Topics.REJECTED.name(), 0);
    try (KafkaConsumer<String, RejectedLine> c = new KafkaConsumer<>(Map.of(
        ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + kafka), new StringDeserializer(),
        Json.serde(RejectedLine.class).deserializer())) {
      c.assign(List.of(p));
      c.seekToBeginning(List.of(p));
      long end = c.endOffsets(List.of(p)).get(p);
      long deadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
      while (c.position(p) < end && System.nanoTime() < deadline) {
        c.poll(Duration.ofMillis(500)).forEach(r -> lines.add(r.value()));
      }
    }
    return lines;
  }
}
