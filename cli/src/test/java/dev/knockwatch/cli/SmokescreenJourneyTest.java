package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's "Which wall do you run?" for smokescreen, in a copy of the repository: its sources
 * block verbatim, {@code ./knockwatch up --sources var/smokescreen.yaml}, then smokescreen's stderr
 * appended to the file the README keeps it in — the v0.0.4 sample, lines written from smokescreen's
 * source (smokescreen, a Go program, does not run here), stamped with the time they are written as
 * smokescreen stamps its own — and each refusal pages under the agent the sources map its client to:
 * the enforce denial of the certificate {@code sandbox-runner-1} off-role, the resolver's denial of
 * {@code 169.254.169.254} for {@code 10.0.4.9} as a sensitive address, the unmapped client as an
 * ingest reject; the allowed and report-mode decisions page nothing.
 */
@Tag("integration")
class SmokescreenJourneyTest {

  static final Duration START = Duration.ofMinutes(3);
  static final Duration ALERT = Duration.ofMinutes(2);
  static final String TOKEN = "smokescreen-journey-token-01";
  static final Path SAMPLE = Launched.REPO.resolve(
      "ingest/src/test/resources/dev/knockwatch/ingest/formats/smokescreen/samples/smokescreen-0.0.4-mtls-connect-http.log");

  @TempDir Path dir;

  @Test
  void smokescreensDenialsPageForTheAgentsItsClientsAreMappedToThroughUp() throws Exception {
    Path checkout = Launched.copyOfRepository(dir.resolve("checkout"));
    ReadmeBlocks readme = ReadmeBlocks.read();
    ReadmeBlocks.Ran sources = ReadmeBlocks.run(readme.starting("sh", "mkdir -p var/smokescreen"), checkout, Map.of());
    assertThat(sources.exit()).as(sources.output()).isZero();
    // the README's smokescreen line appends its stderr to this file
    assertThat(readme.starting("sh", "smokescreen ").text()).contains("2>> var/smokescreen/smokescreen.log");
    Path log = checkout.resolve("var/smokescreen/smokescreen.log");
    assertThat(readme.starting("sh", "./knockwatch up --sources var/smokescreen.yaml").text().strip())
        .isEqualTo("./knockwatch up --sources var/smokescreen.yaml");
    int api = Launched.freePort();
    try (Launched up = Launched.start(checkout, dir.resolve("run"), Map.of("KNOCKWATCH_API_TOKEN", TOKEN), "up",
        "--sources", "var/smokescreen.yaml", "--no-probes", "--kafka-port", String.valueOf(Launched.freePort()),
        "--metrics-port", String.valueOf(Launched.freePort()), "--api-port", String.valueOf(api))) {
      up.awaitLine("Ctrl-C to stop.", START);
      assertThat(up.out()).contains("and the sources of var/smokescreen.yaml");
      String now = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
      String lines = Files.readString(SAMPLE).replaceAll("\"time\":\"[^\"]*\"", "\"time\":\"" + now + "\"");
      Files.writeString(log, lines, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);

      String offRole = up.awaitLine("ALERT [PAGE] off-role-host firing command=agent:sandbox-runner-1 ", ALERT);
      assertThat(offRole).contains("agent=sandbox-runner-1", "role=default", "host=github.com:443");
      String metadata = up.awaitLine("ALERT [CRITICAL] sensitive-address firing command=agent:build-farm ", ALERT);
      assertThat(metadata).contains("agent=build-farm", "169.254.169.254");
      up.awaitLine("ALERT [PAGE] ingest-rejects firing ", ALERT);
      assertThat(up.out()).doesNotContain("pypi.org", "partner.example.net", "webhooks-sender");

      // the agent's key is its timeline: smokescreen's refusals, their command unknown, who smokescreen refused
      JsonNode timeline = Launched.command(api, TOKEN, "agent:build-farm", 1);
      assertThat(timeline.path("commandId").asText()).isEqualTo("agent:build-farm");
      assertThat(timeline.path("timeline")).isNotEmpty().allSatisfy(e -> {
        assertThat(e.path("source").asText()).isEqualTo("smokescreen");
        assertThat(e.path("commandUnknown").asBoolean()).isTrue();
        assertThat(e.path("subject").path("identity").asText()).isEqualTo("src=10.0.4.9");
        assertThat(e.has("commandId")).isFalse();
      });
      up.stop(Duration.ofSeconds(90));
    }
  }
}
