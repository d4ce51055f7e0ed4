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
 * The README's "Which wall do you run?" for Cilium Hubble, in a copy of the repository: its sources
 * block verbatim, {@code ./knockwatch up --sources var/hubble.yaml}, then {@code hubble observe -o json}'s
 * output appended to the file the README keeps it in — the egress sample, lines written from Cilium's
 * source (Cilium needs a Kubernetes cluster, not here), stamped with the time they are written as
 * Hubble stamps its own — and each policy drop pages under the agent the sources map its pod to: the
 * {@code agent-runner} pod's connection to {@code 169.254.169.254} off-role and as a sensitive
 * address, the unmapped {@code ci} pod as an ingest reject; the forwarded flow and the conntrack drop
 * page nothing.
 */
@Tag("integration")
class HubbleJourneyTest {

  static final Duration START = Duration.ofMinutes(3);
  static final Duration ALERT = Duration.ofMinutes(2);
  static final String TOKEN = "hubble-journey-token-0001";
  static final Path SAMPLE = Launched.REPO.resolve(
      "ingest/src/test/resources/dev/knockwatch/ingest/formats/hubble/samples/hubble-1.19.4-observe-egress.jsonl");

  @TempDir Path dir;

  @Test
  void policyDropsPageForTheAgentsTheirPodsAreMappedToThroughUp() throws Exception {
    Path checkout = Launched.copyOfRepository(dir.resolve("checkout"));
    ReadmeBlocks readme = ReadmeBlocks.read();
    ReadmeBlocks.Ran sources = ReadmeBlocks.run(readme.starting("sh", "mkdir -p var/hubble"), checkout, Map.of());
    assertThat(sources.exit()).as(sources.output()).isZero();
    // the README's hubble line appends its output to this file
    assertThat(readme.starting("sh", "hubble observe -o json").text()).contains(">> var/hubble/flows.jsonl");
    Path log = checkout.resolve("var/hubble/flows.jsonl");
    assertThat(readme.starting("sh", "./knockwatch up --sources var/hubble.yaml").text().strip())
        .isEqualTo("./knockwatch up --sources var/hubble.yaml");
    int api = Launched.freePort();
    try (Launched up = Launched.start(checkout, dir.resolve("run"), Map.of("KNOCKWATCH_API_TOKEN", TOKEN), "up",
        "--sources", "var/hubble.yaml", "--no-probes", "--kafka-port", String.valueOf(Launched.freePort()),
        "--metrics-port", String.valueOf(Launched.freePort()), "--api-port", String.valueOf(api))) {
      up.awaitLine("Ctrl-C to stop.", START);
      assertThat(up.out()).contains("and the sources of var/hubble.yaml");
      String now = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
      String lines = Files.readString(SAMPLE).replaceAll("\"time\":\"[^\"]*\"", "\"time\":\"" + now + "\"");
      Files.writeString(log, lines, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);

      String offRole = up.awaitLine("ALERT [PAGE] off-role-host firing command=agent:agent-runner ", ALERT);
      assertThat(offRole).contains("agent=agent-runner", "role=default");
      String metadata = up.awaitLine("ALERT [CRITICAL] sensitive-address firing command=agent:agent-runner ", ALERT);
      assertThat(metadata).contains("169.254.169.254");
      up.awaitLine("ALERT [PAGE] ingest-rejects firing ", ALERT);
      assertThat(up.out()).doesNotContain("pypi.org", "command=agent:xwing");

      // the agent's key is its timeline: Hubble's policy drops, their command unknown, the pod Cilium refused
      JsonNode timeline = Launched.command(api, TOKEN, "agent:agent-runner", 4);
      assertThat(timeline.path("commandId").asText()).isEqualTo("agent:agent-runner");
      assertThat(timeline.path("timeline")).isNotEmpty().allSatisfy(e -> {
        assertThat(e.path("source").asText()).isEqualTo("hubble");
        assertThat(e.path("commandUnknown").asBoolean()).isTrue();
        assertThat(e.path("subject").path("identity").asText()).isEqualTo("pod=agents/agent-runner-6c9f7d5b8-x2lqp");
        assertThat(e.has("commandId")).isFalse();
      });
      assertThat(timeline.path("timeline").toString()).contains("pastebin.com", "8.8.8.8",
          "egress POLICY_DENY by CiliumNetworkPolicy agents/agents-deny-paste");
      up.stop(Duration.ofSeconds(90));
    }
  }
}
