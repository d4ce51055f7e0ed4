package dev.knockwatch.ingest.config;

import dev.knockwatch.events.config.ConfigException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.ListSink;
import dev.knockwatch.ingest.Formats;
import dev.knockwatch.ingest.IngestAgent;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SourcesConfigTest {

  @TempDir Path dir;

  private Path config(String yaml) throws IOException {
    return Files.writeString(dir.resolve("ingest.yaml"), yaml);
  }

  @Test
  void everySourceIsTailedWithItsTypeOptionsAndFields() throws Exception {
    Files.createDirectories(dir.resolve("sandboxes/ci-1"));
    Files.writeString(dir.resolve("sandboxes/ci-1/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl"),
        "{\"line\":\"deny network-outbound example.com:443 (host is not on the allow list)\"}\n");
    Files.createDirectories(dir.resolve("squid"));
    Files.writeString(dir.resolve("squid/access.log"), "1795978481.454      0 127.0.0.1 TCP_DENIED/403 3491 GET "
        + "http://example.com/ - xhfHytmXL-L6RsYw2CrSjA HIER_NONE/- text/html\n");
    Files.createDirectories(dir.resolve("envoy"));
    Files.writeString(dir.resolve("envoy/out.json"), "{\"code\":407,\"cmd\":\"AAAAAAAAAAAAAAAAAAAAAA\",\"authority\":\"bit.ly:443\"}\n");
    Files.createDirectories(dir.resolve("traces/ci-2"));
    Files.writeString(dir.resolve("traces/ci-2/BBBBBBBBBBBBBBBBBBBBBB.trace"),
        "5 connect(5, {sa_family=AF_INET, sin_port=htons(443), sin_addr=inet_addr(\"93.184.215.14\")}, 16) = -1 ENETUNREACH (Network is unreachable)\n");
    Files.writeString(dir.resolve("traces/ci-2/CCCCCCCCCCCCCCCCCCCCCC.trace"), "what is this\n");

    List<IngestAgent.Feed> feeds = SourcesConfig.load(config("""
        sources:
          - path: sandboxes/{agentId}/{commandId}.violations.jsonl
          - path: squid/access.log
            type: squid
            logformat: knock
            fields: {agentId: squid-1}
          - path: envoy/*.json
            type: json
            mapping: {commandId: cmd, authority: authority, status: code}
          - path: traces/**/*.trace
        """), dir.resolve("var"));
    ListSink sink = new ListSink();
    IngestAgent agent = new IngestAgent(feeds, sink, "h", Clock.systemUTC(), Duration.ZERO);
    assertThat(agent.pollOnce()).isEqualTo(5);

    Map<String, ViolationEvent> bySource = sink.events.stream().collect(Collectors.toMap(ViolationEvent::source, e -> e));
    assertThat(bySource.get("srt-violation").commandId()).isEqualTo("xhfHytmXL-L6RsYw2CrSjA");
    assertThat(bySource.get("srt-violation").agentId()).isEqualTo("ci-1");
    assertThat(bySource.get("squid").agentId()).isEqualTo("squid-1");
    assertThat(bySource.get("json").host()).isEqualTo("bit.ly");
    assertThat(bySource.get("strace").commandId()).isEqualTo("BBBBBBBBBBBBBBBBBBBBBB");
    assertThat(bySource.get("strace").agentId()).isEqualTo("ci-2");
    assertThat(bySource.get("squid").origin().file()).isEqualTo(dir.resolve("squid") + "/access.log");
    assertThat(sink.rejected).singleElement().satisfies(r -> {
      assertThat(r.code()).isEqualTo("unparseable");
      assertThat(r.reason()).isEqualTo("cannot tell this file's format from its name or first line: give its source a type");
    });
    assertThat(Files.list(dir.resolve("var")).count()).as("one checkpoint file per source").isEqualTo(4);
  }

  @Test
  void problemsAreNamedWithFileSourceAndKey() throws IOException {
    Path f = dir.resolve("ingest.yaml");
    assertThatThrownBy(() -> SourcesConfig.load(config("sources:\n  - path: a\n    typo: x\n"), dir))
        .hasMessage(f + ":3: source 1: unknown key \"typo\" (known: "
            + String.join(", ", SourcesConfig.allKeys()) + ")");
    assertThatThrownBy(() -> SourcesConfig.load(config("sources:\n  - path: a\n  - type: squid\n"), dir))
        .hasMessage(f + ":3: source 2: \"path\" is required");
    assertThatThrownBy(() -> SourcesConfig.load(config("sources:\n  - path: a\n    type: syslog\n"), dir))
        .hasMessage(f + ":3: source 1: type \"syslog\" is not one of " + Formats.names());
    assertThatThrownBy(() -> SourcesConfig.load(config("sources:\n  - path: a\n    type: json\n"), dir))
        .hasMessage(f + ":2: source 1: mapping is missing: a json source needs a \"mapping\" of event fields to JSON paths");
    assertThatThrownBy(() -> SourcesConfig.load(config("sources:\n  - path: a\n    logformat: knock\n"), dir))
        .hasMessage(f + ":3: source 1: \"logformat\" is a key of squid sources: give the source its \"type\"");
    assertThatThrownBy(() -> SourcesConfig.load(config("sources:\n  - path: a\n    type: strace\n    mapping: {host: h}\n"), dir))
        .hasMessage(f + ":4: source 1: \"mapping\" is a key of json sources, not of strace sources");
    assertThatThrownBy(() -> SourcesConfig.load(config("sources:\n  - path: a\n    type: json\n    mapping: {hostname: h}\n"), dir))
        .hasMessageStartingWith(f + ":4: source 1: mapping: unknown mapping field \"hostname\"");
    assertThatThrownBy(() -> SourcesConfig.load(config("sources:\n  - path: a\n    type: squid\n    logformat: plain text\n"), dir))
        .hasMessage(f + ":4: source 1: logformat: logformat \"plain text\" has no %codes");
    assertThatThrownBy(() -> SourcesConfig.load(config("sources:\n  - path: a\n    fields: {role: ci}\n"), dir))
        .hasMessage(f + ":3: source 1: fields: unknown field \"role\" (known: agentId, commandId)");
    assertThatThrownBy(() -> SourcesConfig.load(config("sources: []\n"), dir))
        .hasMessage(f + ":1: needs a non-empty top-level \"sources:\" list (or only an \"otlp:\" section)");
    assertThatThrownBy(() -> SourcesConfig.load(config("sources:\n  - path: logs/{user}/x.log\n"), dir))
        .hasMessage(f + ":2: source 1: path logs/{user}/x.log: only {agentId} and {commandId} can stand in a path");
  }

  /** Every problem of every source at once, each at its line, as the rules and receivers are reported. */
  @Test
  void everyProblemOfEverySourceIsListedAtOnce() throws IOException {
    Path f = dir.resolve("ingest.yaml");
    assertThatThrownBy(() -> SourcesConfig.load(config("""
        sources:
          - path: a
            type: syslog
          - type: json
            refusedStatuses: [403, forbidden]
            mapping: {host: h}
          - path: b
            denyHeaders: {x: y}
            type: proxy-403
        """), dir))
        .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.problems()).containsExactly(
            f + ":3: source 1: type \"syslog\" is not one of " + Formats.names(),
            f + ":4: source 2: \"path\" is required",
            f + ":5: source 2: refusedStatuses: \"forbidden\" is not a status code",
            f + ":8: source 3: denyHeaders must be a list"));
  }

  /** A fleet's walls, each in a sources file of its own: every file's feeds, each path against its own file. */
  @Test
  void severalFilesAreReadInTheirOrderEachPathAgainstItsOwnFile() throws Exception {
    Files.createDirectories(dir.resolve("a/squid"));
    Files.writeString(dir.resolve("a/squid/access.log"), "1795978481.454      0 127.0.0.1 TCP_DENIED/403 3491 GET "
        + "http://example.com/ - xhfHytmXL-L6RsYw2CrSjA HIER_NONE/- text/html\n");
    Files.createDirectories(dir.resolve("b/traces/ci-2"));
    Files.writeString(dir.resolve("b/traces/ci-2/BBBBBBBBBBBBBBBBBBBBBB.trace"),
        "5 connect(5, {sa_family=AF_INET, sin_port=htons(443), sin_addr=inet_addr(\"93.184.215.14\")}, 16) = -1 ENETUNREACH (Network is unreachable)\n");
    Path a = Files.writeString(dir.resolve("a/squid.yaml"), "sources:\n  - {path: squid/access.log, type: squid, logformat: knock, fields: {agentId: squid-1}}\n");
    Path b = Files.writeString(dir.resolve("b/strace.yaml"), "sources:\n  - path: traces/**/*.trace\n");
    List<IngestAgent.Feed> feeds = SourcesConfig.load(List.of(a, b), dir.resolve("var"));
    assertThat(feeds).hasSize(2);
    ListSink sink = new ListSink();
    assertThat(new IngestAgent(feeds, sink, "h", Clock.systemUTC(), Duration.ZERO).pollOnce()).isEqualTo(2);
    assertThat(sink.events).extracting(ViolationEvent::source).containsExactlyInAnyOrder("squid", "strace");
    assertThat(sink.rejected).isEmpty();
  }

  @Test
  void theProblemsOfEveryFileAreListedAtOnce() throws IOException {
    Path a = Files.writeString(dir.resolve("a.yaml"), "sources:\n  - path: a\n    typo: x\n");
    Path b = Files.writeString(dir.resolve("b.yaml"), "sources: []\n");
    assertThatThrownBy(() -> SourcesConfig.load(List.of(a, b), dir))
        .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.problems()).hasSize(2)
            .anySatisfy(p -> assertThat(p).startsWith(a + ":3: source 1: unknown key \"typo\""))
            .anySatisfy(p -> assertThat(p).startsWith(b + ":1: needs a non-empty top-level \"sources:\" list")));
  }

  @Test
  void theShippedExampleLoads() {
    assertThat(SourcesConfig.load(Path.of("../config/ingest.example.yaml"), dir.resolve("var"))).hasSize(5);
  }

  @Test
  void templatesSplitIntoAFixedRootAndAPatternWithFields() {
    SourcesConfig.Template t = SourcesConfig.Template.of(dir, "logs/{agentId}/{commandId}.violations.jsonl");
    assertThat(t.root()).isEqualTo(dir.resolve("logs"));
    assertThat(t.matches("ci-1/abc.violations.jsonl")).isTrue();
    assertThat(t.matches("ci-1/deeper/abc.violations.jsonl")).isFalse();
    assertThat(t.fields("ci-1/run.1.violations.jsonl")).containsEntry("agentId", "ci-1").containsEntry("commandId", "run.1");
    SourcesConfig.Template any = SourcesConfig.Template.of(dir, "/var/log/**/*.strace");
    assertThat(any.root()).isEqualTo(Path.of("/var/log"));
    assertThat(any.matches("a/b/c/x.strace")).isTrue();
    assertThat(SourcesConfig.Template.of(dir, "squid/access.log").root()).isEqualTo(dir.resolve("squid"));
  }
}
