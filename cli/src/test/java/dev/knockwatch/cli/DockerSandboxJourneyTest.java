package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's "Which wall do you run?" for Docker Sandboxes, in a copy of the repository: its
 * sources block verbatim (with the test's own {@code XDG_STATE_HOME}), {@code ./knockwatch up
 * --sources var/dockersandbox.yaml}, then an audit file finished in the daemon's {@code auditkit}
 * directory as the daemon finishes one (written as {@code .tmp}, renamed {@code audit-….jsonl}) —
 * the v0.31.0 sample, records written from Docker's documentation (the daemon does not run here),
 * stamped with the time they are written — and each refusal pages under the agent the sources map
 * its user and AI agent to: the denial of {@code example.com} off-role, the denial of
 * {@code 169.254.169.254} as a sensitive address, the unmapped {@code codex} sandbox as an ingest
 * reject; the allowed connection and the daemon's own records page nothing, and a {@code .tmp} file
 * still being written is never read.
 */
@Tag("integration")
class DockerSandboxJourneyTest {

  static final Duration START = Duration.ofMinutes(3);
  static final Duration ALERT = Duration.ofMinutes(2);
  static final String TOKEN = "dockersandbox-journey-token-01";
  static final Path SAMPLE = Launched.REPO.resolve(
      "ingest/src/test/resources/dev/knockwatch/ingest/formats/dockersandbox/samples/dockersandbox-0.31.0-network-deny.jsonl");
  /** The daemon's run; Docker does not document how the name's UTC time is written, so this one is the example's. */
  static final String FILE = "audit-20261206T100000Z-8a3bc076-79d0-4502-baf3-cc6ad35fb578-";

  @TempDir Path dir;

  @Test
  void dockerSandboxesDenialsPageForTheAgentsItsUsersAndAgentsAreMappedToThroughUp() throws Exception {
    Path checkout = Launched.copyOfRepository(dir.resolve("checkout"));
    Path state = dir.resolve("state");
    ReadmeBlocks readme = ReadmeBlocks.read();
    ReadmeBlocks.Ran sources = ReadmeBlocks.run(readme.starting("sh", "mkdir -p var && cat > var/dockersandbox.yaml"),
        checkout, Map.of("XDG_STATE_HOME", state.toString()));
    assertThat(sources.exit()).as(sources.output()).isZero();
    Path auditkit = state.resolve("sandboxes/sandboxes/auditkit");
    assertThat(Files.readString(checkout.resolve("var/dockersandbox.yaml")))
        .contains("path: " + auditkit + "/audit-*.jsonl");
    Files.createDirectories(auditkit); // the daemon's, before it writes a record
    assertThat(readme.starting("sh", "./knockwatch up --sources var/dockersandbox.yaml").text().strip())
        .isEqualTo("./knockwatch up --sources var/dockersandbox.yaml");
    int api = Launched.freePort();
    try (Launched up = Launched.start(checkout, dir.resolve("run"), Map.of("KNOCKWATCH_API_TOKEN", TOKEN), "up",
        "--sources", "var/dockersandbox.yaml", "--no-probes", "--kafka-port", String.valueOf(Launched.freePort()),
        "--metrics-port", String.valueOf(Launched.freePort()), "--api-port", String.valueOf(api))) {
      up.awaitLine("Ctrl-C to stop.", START);
      assertThat(up.out()).contains("and the sources of var/dockersandbox.yaml");
      String now = Instant.now().truncatedTo(ChronoUnit.MICROS).toString();
      String records = Files.readString(SAMPLE).replaceAll("\"timestamp\":\"[^\"]*\"", "\"timestamp\":\"" + now + "\"");
      // a file the daemon is still writing: a denial of its own host, never to be read
      String inProgress = records.lines().filter(l -> l.contains("\"resource_id\":\"example.com:443\""))
          .findFirst().orElseThrow().replace("example.com", "in-progress.example") + "\n";
      Files.writeString(auditkit.resolve(FILE + "2.jsonl.tmp"), inProgress, StandardCharsets.UTF_8);
      Path tmp = Files.writeString(auditkit.resolve(FILE + "1.jsonl.tmp"), records, StandardCharsets.UTF_8);
      Files.move(tmp, auditkit.resolve(FILE + "1.jsonl"), StandardCopyOption.ATOMIC_MOVE);

      String offRole = up.awaitLine("ALERT [PAGE] off-role-host firing command=agent:claude-jordandoe ", ALERT);
      assertThat(offRole).contains("agent=claude-jordandoe", "role=default", "host=example.com:443");
      String metadata = up.awaitLine("ALERT [CRITICAL] sensitive-address firing command=agent:claude-jordandoe ", ALERT);
      assertThat(metadata).contains("169.254.169.254");
      up.awaitLine("ALERT [PAGE] ingest-rejects firing ", ALERT);
      assertThat(up.out()).doesNotContain("api.anthropic.com", "in-progress.example", "pastebin.com");

      // the agent's key is its timeline: the daemon's denials, their command unknown, who Docker refused
      JsonNode timeline = Launched.command(api, TOKEN, "agent:claude-jordandoe", 2);
      assertThat(timeline.path("commandId").asText()).isEqualTo("agent:claude-jordandoe");
      assertThat(timeline.path("timeline")).hasSize(2).allSatisfy(e -> {
        assertThat(e.path("source").asText()).isEqualTo("dockersandbox");
        assertThat(e.path("commandUnknown").asBoolean()).isTrue();
        assertThat(e.path("subject").path("identity").asText()).isEqualTo("username=jordandoe agent=claude");
        assertThat(e.path("host").asText()).isIn("example.com", "169.254.169.254");
        assertThat(e.has("commandId")).isFalse();
      });
      up.stop(Duration.ofSeconds(90));
    }
  }
}
