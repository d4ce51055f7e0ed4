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
 * The README's "Which wall do you run?" for OpenShell, in a copy of the repository: its sources block
 * verbatim, {@code ./knockwatch up --sources var/openshell.yaml}, then the sandbox's OCSF lines
 * appended to the file the README keeps them in — the 0.0.111 samples, lines written from
 * OpenShell's source (OpenShell does not run here), stamped with the time they are written as the
 * supervisor stamps its own — and each refusal pages under the agent the sources map its sandbox
 * to: the refused CONNECT off-role, the direct dial after it as a bypass, the unmapped sandbox as an
 * ingest reject; the allowed CONNECT, the finding and the configuration event page nothing.
 */
@Tag("integration")
class OpenShellJourneyTest {

  static final Duration START = Duration.ofMinutes(3);
  static final Duration ALERT = Duration.ofMinutes(2);
  static final String TOKEN = "openshell-journey-token-0001";
  static final Path SAMPLES = Launched.REPO.resolve("ingest/src/test/resources/dev/knockwatch/ingest/formats/ocsf/samples");

  @TempDir Path dir;

  @Test
  void openShellsRefusalsPageForTheAgentItsSandboxIsMappedToThroughUp() throws Exception {
    Path checkout = Launched.copyOfRepository(dir.resolve("checkout"));
    ReadmeBlocks readme = ReadmeBlocks.read();
    ReadmeBlocks.Ran sources = ReadmeBlocks.run(readme.starting("sh", "mkdir -p var/openshell"), checkout, Map.of());
    assertThat(sources.exit()).as(sources.output()).isZero();
    // the README turns the JSON lines on, then follows them into this file
    assertThat(readme.starting("sh", "openshell settings set").text()).contains("--key ocsf_json_enabled --value true");
    assertThat(readme.starting("sh", "openshell sandbox exec --name work-session").text())
        .contains("/var/log/openshell-ocsf.", ">> var/openshell/openshell-ocsf.log");
    Path log = checkout.resolve("var/openshell/openshell-ocsf.log");
    assertThat(readme.starting("sh", "./knockwatch up --sources var/openshell.yaml").text().strip())
        .isEqualTo("./knockwatch up --sources var/openshell.yaml");
    int api = Launched.freePort();
    try (Launched up = Launched.start(checkout, dir.resolve("run"), Map.of("KNOCKWATCH_API_TOKEN", TOKEN), "up",
        "--sources", "var/openshell.yaml", "--no-probes", "--kafka-port", String.valueOf(Launched.freePort()),
        "--metrics-port", String.valueOf(Launched.freePort()), "--api-port", String.valueOf(api))) {
      up.awaitLine("Ctrl-C to stop.", START);
      assertThat(up.out()).contains("and the sources of var/openshell.yaml");
      String now = "\"time\":" + Instant.now().truncatedTo(ChronoUnit.SECONDS).toEpochMilli() + ",";
      String lines = (Files.readString(SAMPLES.resolve("openshell-0.0.111-connect-forward-bypass.jsonl"))
          + Files.readString(SAMPLES.resolve("openshell-0.0.111-ssrf-unmapped-sandbox.jsonl")))
          .replaceAll("\"time\":[0-9]+,", now);
      Files.writeString(log, lines, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);

      String offRole = up.awaitLine("ALERT [PAGE] off-role-host firing command=agent:openshell-work-session ", ALERT);
      assertThat(offRole).contains("agent=openshell-work-session", "role=default");
      String bypass = up.awaitLine("ALERT [PAGE] bypass firing command=agent:openshell-work-session ", ALERT);
      assertThat(bypass).contains("93.184.216.34");
      up.awaitLine("ALERT [PAGE] ingest-rejects firing ", ALERT);
      assertThat(up.out()).doesNotContain("api.github.com", "pypi.org");

      // the agent's key is its timeline: OpenShell's refusals, their command unknown, the sandbox OpenShell refused
      JsonNode timeline = Launched.command(api, TOKEN, "agent:openshell-work-session", 4);
      assertThat(timeline.path("commandId").asText()).isEqualTo("agent:openshell-work-session");
      assertThat(timeline.path("timeline")).isNotEmpty().allSatisfy(e -> {
        assertThat(e.path("source").asText()).isEqualTo("ocsf");
        assertThat(e.path("commandUnknown").asBoolean()).isTrue();
        assertThat(e.path("subject").path("identity").asText()).isEqualTo("container=work-session");
        assertThat(e.has("commandId")).isFalse();
      });
      assertThat(timeline.path("timeline").findValuesAsText("host"))
          .contains("httpbin.org", "example.com", "93.184.216.34", "db.corp.internal");
      up.stop(Duration.ofSeconds(90));
    }
  }
}
