package dev.knockwatch.ingest.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.knockwatch.events.config.ConfigException;
import dev.knockwatch.ingest.otlp.OtlpClients;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The sources file's {@code otlp:}: who may export and as which agent, every problem at its line. */
class OtlpConfigTest {

  @TempDir Path dir;

  static final String SHA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

  @Test
  void aSourcesFileMayHoldOnlyTheEndpointsClients() throws Exception {
    Path f = dir.resolve("sources.yaml");
    Files.writeString(f, """
        otlp:
          listen: 0.0.0.0:14318
          maxBodyBytes: 1048576
          recordsPerSecond: 500
          clients:
            - {agent: dev-laptop-7, tokenSha256: "%s"}
            - {agent: ci-runner-1, subject: "CN=ci-runner-1"}
        """.formatted(SHA.toUpperCase()));
    OtlpConfig c = OtlpConfig.load(f).orElseThrow();
    assertThat(c.bind()).isEqualTo("0.0.0.0");
    assertThat(c.port()).isEqualTo(14318);
    assertThat(c.maxBodyBytes()).isEqualTo(1048576);
    assertThat(c.recordsPerSecond()).isEqualTo(500);
    assertThat(c.burst()).isEqualTo(20_000);
    assertThat(c.clients()).containsExactly(new OtlpClients.Client("dev-laptop-7", SHA, null, null),
        new OtlpClients.Client("ci-runner-1", null, null, "CN=ci-runner-1"));
    assertThat(SourcesConfig.load(f, dir)).as("no files to read").isEmpty();
    // the token itself is never in the file: its digest names the agent
    OtlpClients clients = new OtlpClients(c.clients(), null, java.time.Clock.systemUTC());
    assertThat(clients.agentOfToken("test")).isEmpty(); // too short to be a token at all
    assertThat(OtlpClients.sha256("test")).isEqualTo(SHA);
  }

  @Test
  void oneOfSeveralSourcesFilesHoldsTheEndpointNotTwo() throws Exception {
    Path walls = Files.writeString(dir.resolve("walls.yaml"), "sources:\n  - path: squid/access.log\n");
    Path a = Files.writeString(dir.resolve("a.yaml"), "otlp:\n  listen: 127.0.0.1:14318\n");
    Path b = Files.writeString(dir.resolve("b.yaml"), "otlp:\n  listen: 127.0.0.1:14319\n");
    assertThat(OtlpConfig.load(List.of(walls))).isEmpty();
    assertThat(OtlpConfig.load(List.of(walls, a)).orElseThrow().port()).isEqualTo(14318);
    assertThatThrownBy(() -> OtlpConfig.load(List.of(a, walls, b))).isInstanceOf(ConfigException.class)
        .hasMessage(b + ": an \"otlp:\" section, as " + a + " has: the endpoint and its clients are one section, in one"
            + " of the sources files");
  }

  @Test
  void everyProblemIsNamedWithItsLine() throws Exception {
    Path f = dir.resolve("sources.yaml");
    Files.writeString(f, """
        otlp:
          listen: everywhere
          burst: 0
          clients:
            - {agent: "../etc", tokenSha256: "%s"}
            - {agent: ok-agent, tokenSha256: "not hex"}
            - {agent: two-ways, tokenSha256: "%s", subject: "CN=x"}
            - {tokenSha256: "%s"}
          other: 1
        """.formatted(SHA, SHA, SHA));
    assertThatThrownBy(() -> OtlpConfig.load(f)).isInstanceOf(ConfigException.class)
        .hasMessageContaining("sources.yaml:2: otlp: listen \"everywhere\" is not host:port")
        .hasMessageContaining("sources.yaml:3: otlp: burst \"0\" is not a number from 1")
        .hasMessageContaining("sources.yaml:5: otlp: clients entry 1: agent \"../etc\"")
        .hasMessageContaining("sources.yaml:6: otlp: clients entry 2: tokenSha256 is not a SHA-256")
        .hasMessageContaining("sources.yaml:7: otlp: clients entry 3: give exactly one of")
        .hasMessageContaining("sources.yaml:8: otlp: clients entry 4: agent is missing")
        .hasMessageContaining("other");
  }
}
