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
 * The README's "Which wall do you run?" for Envoy, in a copy of the repository: its sources block
 * verbatim, {@code ./knockwatch up --sources var/envoy.yaml}, then Envoy's access log appended to
 * the file the README's {@code access_log} names — the json_format sample, lines written from
 * Envoy's source and docs with the fields that block configures (Envoy is not packaged here),
 * stamped with the time they are written — and each refusal pages under the agent the sources map
 * its peer to: the CONNECT of the SPIFFE id {@code runner-1} off-role, the metadata request of the
 * subject {@code CN=build-farm-7} as a sensitive address, the unmapped SPIFFE id as an ingest
 * reject; the allowed CONNECT and the upstream's own 403 page nothing.
 */
@Tag("integration")
class EnvoyJourneyTest {

  static final Duration START = Duration.ofMinutes(3);
  static final Duration ALERT = Duration.ofMinutes(2);
  static final String TOKEN = "envoy-journey-token-0001";
  static final Path SAMPLE = Launched.REPO.resolve(
      "ingest/src/test/resources/dev/knockwatch/ingest/formats/envoy/samples/envoy-1.37.0-json-format.log");

  @TempDir Path dir;

  @Test
  void envoysRbacRefusalsPageForTheAgentsItsPeersAreMappedToThroughUp() throws Exception {
    Path checkout = Launched.copyOfRepository(dir.resolve("checkout"));
    ReadmeBlocks readme = ReadmeBlocks.read();
    ReadmeBlocks.Ran sources = ReadmeBlocks.run(readme.starting("sh", "mkdir -p var/envoy"), checkout, Map.of());
    assertThat(sources.exit()).as(sources.output()).isZero();
    // the README's access_log writes the file the sources read, with every field the sample holds
    String accessLog = readme.starting("yaml", "access_log:").text();
    assertThat(accessLog).contains("path: var/envoy/access.log");
    for (String field : new String[] {"start_time", "method", "path", "authority", "requested_server_name",
        "response_code", "response_flags", "response_code_details", "connection_termination_details",
        "downstream_remote_address", "downstream_peer_uri_san", "downstream_peer_subject", "upstream_host",
        "user_agent"}) {
      assertThat(accessLog).contains("          " + field + ": \"%");
      assertThat(Files.readString(SAMPLE)).contains("\"" + field + "\":");
    }
    Path log = checkout.resolve("var/envoy/access.log");
    assertThat(readme.starting("sh", "./knockwatch up --sources var/envoy.yaml").text().strip())
        .isEqualTo("./knockwatch up --sources var/envoy.yaml");
    int api = Launched.freePort();
    try (Launched up = Launched.start(checkout, dir.resolve("run"), Map.of("KNOCKWATCH_API_TOKEN", TOKEN), "up",
        "--sources", "var/envoy.yaml", "--no-probes", "--kafka-port", String.valueOf(Launched.freePort()),
        "--metrics-port", String.valueOf(Launched.freePort()), "--api-port", String.valueOf(api))) {
      up.awaitLine("Ctrl-C to stop.", START);
      assertThat(up.out()).contains("and the sources of var/envoy.yaml");
      String now = Instant.now().truncatedTo(ChronoUnit.MILLIS).toString();
      String lines = Files.readString(SAMPLE).replaceAll("\"start_time\":\"[^\"]*\"", "\"start_time\":\"" + now + "\"");
      Files.writeString(log, lines, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);

      String offRole = up.awaitLine("ALERT [PAGE] off-role-host firing command=agent:sandbox-runner-1 ", ALERT);
      assertThat(offRole).contains("agent=sandbox-runner-1", "role=default", "github.com:443");
      String metadata = up.awaitLine("ALERT [CRITICAL] sensitive-address firing command=agent:build-farm ", ALERT);
      assertThat(metadata).contains("agent=build-farm", "169.254.169.254");
      up.awaitLine("ALERT [PAGE] ingest-rejects firing ", ALERT);
      assertThat(up.out()).doesNotContain("pypi.org", "api.github.com");

      // the agent's key is its timeline: Envoy's refusals, their command unknown, who Envoy refused
      JsonNode timeline = Launched.command(api, TOKEN, "agent:build-farm");
      assertThat(timeline.path("commandId").asText()).isEqualTo("agent:build-farm");
      assertThat(timeline.path("timeline")).isNotEmpty().allSatisfy(e -> {
        assertThat(e.path("source").asText()).isEqualTo("envoy");
        assertThat(e.path("commandUnknown").asBoolean()).isTrue();
        assertThat(e.path("subject").path("identity").asText()).isEqualTo("subject=CN=build-farm-7,OU=ci");
        assertThat(e.path("reason").asText()).isEqualTo("deny-metadata");
        assertThat(e.has("commandId")).isFalse();
      });
      up.stop(Duration.ofSeconds(90));
    }
  }
}
