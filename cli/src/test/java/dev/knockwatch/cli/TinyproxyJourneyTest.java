package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.ViolationEvent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/WALLS.md's tinyproxy section, in a copy of the repository, as root: its
 * tinyproxy.conf, filter and sources file, {@code ./knockwatch up --sources var/tinyproxy.yaml}, then
 * its demo verbatim — Debian's tinyproxy in a fresh network namespace holding only {@code lo}, a
 * client of {@code sandbox-runner-1} refused a filtered host and a CONNECT port six times each, a
 * client no entry maps refused once — and the agent pages (off-role-host, persistent-retry) under
 * its agent's key with every refusal in its timeline, while the unmapped client pages once as an
 * ingest reject whose refusal is kept. Then its stop block ends tinyproxy and the namespace.
 */
@Tag("integration")
class TinyproxyJourneyTest {

  static final Duration START = Duration.ofMinutes(3);
  static final Duration ALERT = Duration.ofMinutes(2);
  static final String TOKEN = "tinyproxy-journey-token-0001";

  @TempDir Path dir;

  @Test
  void aMappedClientsRefusalsPageForItsAgentAndAnUnmappedOnePagesOnceAsAReject() throws Exception {
    for (String tool : List.of("tinyproxy", "curl", "ip")) {
      assertThat(new ProcessBuilder("sh", "-c", "command -v " + tool).start().waitFor())
          .as("%s is installed (./knockwatch test installs tinyproxy)", tool).isZero();
    }
    assertThat(new ProcessBuilder("id", "-u").start().getInputStream().readAllBytes()).asString()
        .as("the demo runs as root").startsWith("0");
    Path checkout = Launched.copyOfRepository(dir.resolve("checkout"));
    ReadmeBlocks readme = ReadmeBlocks.read("docs/WALLS.md");
    ReadmeBlocks.Ran sources = ReadmeBlocks.run(ReadmeBlocks.read().starting("sh", "mkdir -p var/tinyproxy"), checkout,
        Map.of());
    assertThat(sources.exit()).as(sources.output()).isZero();
    ReadmeBlocks.Ran setup = ReadmeBlocks.run(readme.starting("sh", "cat > var/tinyproxy/tinyproxy.conf"), checkout,
        Map.of());
    assertThat(setup.exit()).as(setup.output()).isZero();
    int api = Launched.freePort();
    try (Launched up = Launched.start(checkout, dir.resolve("run"), Map.of("KNOCKWATCH_API_TOKEN", TOKEN), "up",
        "--sources", "var/tinyproxy.yaml", "--no-probes", "--kafka-port", String.valueOf(Launched.freePort()),
        "--metrics-port", String.valueOf(Launched.freePort()), "--api-port", String.valueOf(api))) {
      up.awaitLine("Ctrl-C to stop.", START);
      assertThat(up.out()).contains("and the sources of var/tinyproxy.yaml");
      ReadmeBlocks.Block stop = readme.starting("sh", "kill \"$(cat var/tinyproxy/tinyproxy.pid)\"");
      try {
        ReadmeBlocks.Ran demo = ReadmeBlocks.run(readme.starting("sh", "ip netns add agent-tp"), checkout, Map.of());
        assertThat(demo.exit()).as(demo.output()).isZero();
        String offRole = up.awaitLine("ALERT [PAGE] off-role-host firing command=agent:sandbox-runner-1 ", ALERT);
        String retry = up.awaitLine("ALERT [WARNING] persistent-retry firing command=agent:sandbox-runner-1 ", ALERT);
        assertThat(List.of(offRole, retry)).allSatisfy(l -> assertThat(l).contains("role=default"));
        assertThat(offRole).contains("agent=sandbox-runner-1");
        // the unmapped client: one page keyed by the wall and its address, its refusal kept
        String rejects = ViolationEvent.unattributedCommandId("tinyproxy src=10.78.0.9");
        up.awaitLine("ALERT [PAGE] ingest-rejects firing command=" + rejects + " ", ALERT);

        JsonNode timeline = Launched.command(api, TOKEN, "agent:sandbox-runner-1", 12);
        assertThat(timeline.path("events").asInt()).isEqualTo(12);
        assertThat(timeline.path("sources").path("tinyproxy").asInt()).isEqualTo(12);
        assertThat(timeline.path("timeline")).isNotEmpty().allSatisfy(e -> {
          assertThat(e.path("source").asText()).isEqualTo("tinyproxy");
          assertThat(e.path("commandUnknown").asBoolean()).isTrue();
          assertThat(e.path("subject").path("identity").asText()).isEqualTo("src=10.78.0.2");
          assertThat(e.has("commandId")).isFalse();
          assertThat(e.path("host").asText()).isIn("evil.example", "pypi.org");
        });
        JsonNode rejected = Launched.command(api, TOKEN, rejects);
        assertThat(rejected.path("events").asInt()).isEqualTo(1);
        assertThat(up.out().lines().filter(l -> l.contains("ingest-rejects firing"))).hasSize(1);
      } finally {
        ReadmeBlocks.Ran stopped = ReadmeBlocks.run(stop, checkout, Map.of());
        assertThat(stopped.exit()).as(stopped.output()).isZero();
      }
      assertThat(new String(new ProcessBuilder("ip", "netns", "list").start().getInputStream().readAllBytes()))
          .doesNotContain("agent-tp");
      assertThat(Files.readString(checkout.resolve("var/tinyproxy/tinyproxy.log"))).contains("Shutting down.");
      up.stop(Duration.ofSeconds(90));
    }
  }
}
