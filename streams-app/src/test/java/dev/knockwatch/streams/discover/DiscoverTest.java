package dev.knockwatch.streams.discover;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Glob;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.DetectionTopology;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.PolicyLoader;
import dev.knockwatch.streams.TimelineTopology;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The timeline app's discovery aggregates on a TopologyTestDriver: the narrow list, its risks, its bounds. */
class DiscoverTest {

  static final Instant T0 = Instant.parse("2026-12-01T10:00:00Z");

  @TempDir Path state;
  @TempDir Path rules;
  TopologyTestDriver driver;
  TestInputTopic<String, ViolationEvent> violations;
  TestInputTopic<String, Alert> alerts;
  Policy policy;
  int seq;

  @BeforeEach
  void start() throws IOException {
    Files.writeString(rules.resolve("rules.yaml"), "rules:\n  - id: off-role-host\n    detector: off-role\n"
        + "  - id: bypass\n    detector: bypass\n    within: 2m\n");
    Files.writeString(rules.resolve("roles.yaml"), "roles:\n  ci:\n    hosts: [\"api.github.com:443\"]\n"
        + "agents:\n  - match: \"ci-*\"\n    role: ci\n");
    policy = PolicyLoader.load(rules);
    Properties p = DetectionTopology.streamsConfig("discover-test", "unused:9092", state, Map.of());
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
    driver = new TopologyTestDriver(TimelineTopology.build(policy, Duration.ofDays(30)), p, T0.plusSeconds(3600));
    driver.advanceWallClockTime(Duration.ofMillis(100));
    violations = driver.createInputTopic(Topics.VIOLATIONS.name(), new StringSerializer(),
        Json.serde(ViolationEvent.class).serializer());
    alerts = driver.createInputTopic(Topics.ALERTS.name(), new StringSerializer(), Json.serde(Alert.class).serializer());
  }

  @AfterEach
  void stop() {
    driver.close();
  }

  void refuse(String command, String agent, String host, Integer port, String task) {
    Instant at = T0.plusSeconds(seq);
    // as ingest publishes it: every agent-written field sanitized and bounded (docs/TRUST.md)
    violations.pipeInput(command, Sanitize.event(ViolationEvent.builder().eventId("e" + seq++).commandId(command).agentId(agent)
        .source("srt-violation").kind(Kind.NETWORK).action("network-outbound").host(host).port(port)
        .taskId(task).sessionId(task == null ? null : "s1").reason("host is not on the allow list").observedAt(at).build()), at);
  }

  /** What the query API reads: the store underneath, as the last commit wrote it. */
  @SuppressWarnings("unchecked")
  <V> ReadOnlyKeyValueStore<String, V> store(String name) {
    return (ReadOnlyKeyValueStore<String, V>) driver.getAllStateStores().get(name);
  }

  List<Allowlist.RoleHosts> suggest(String role, String agent) {
    ReadOnlyKeyValueStore<String, RoleHour> store = store(DiscoverProcessor.ROLE_HOURS);
    return Allowlist.suggest(Buckets.read(List.of(store), T0.minusSeconds(60), T0.plusSeconds(7200)), policy, role,
        agent == null ? null : Glob.of(agent), T0.minusSeconds(60), T0.plusSeconds(7200), 50);
  }

  static Allowlist.Host host(Allowlist.RoleHosts r, String target) {
    return r.hosts().stream().filter(h -> h.target().equals(target)).findFirst().orElseThrow(
        () -> new AssertionError(target + " not in " + r.hosts().stream().map(Allowlist.Host::target).toList()));
  }

  @Test
  void theNarrowListRanksByDistinctNeedAndNeverWidensOrProposesWhatMustStayShut() {
    for (int c = 0; c < 3; c++) { // three tool calls of two tasks, two agents
      refuse("ReleaseDownload0000000" + c, c == 2 ? "ci-runner-2" : "ci-runner-1", "objects.githubusercontent.com", 443,
          c == 2 ? "task-b" : "task-a");
      refuse("ReleaseDownload0000000" + c, c == 2 ? "ci-runner-2" : "ci-runner-1", "objects.githubusercontent.com", 443,
          c == 2 ? "task-b" : "task-a");
    }
    refuse("DriftCommand0000000001", "ci-runner-1", "api.github.com", 443, null);
    refuse("DriftCommand0000000002", "ci-runner-1", "api.github.com", 443, null);
    refuse("MetadataCommand0000001", "ci-runner-1", "169.254.169.254", 80, null);
    refuse("ShortenerCommand000001", "ci-runner-1", "bit.ly", 443, null);
    refuse("PasteCommand0000000001", "ci-runner-1", "pastebin.com", 443, null);
    refuse("PatternCommand00000001", "ci-runner-1", "*.githubusercontent.com", 443, null);
    refuse("LiteralCommand00000001", "ci-runner-1", "8.8.8.8", 53, null);
    refuse("OnceCommand00000000001", "ci-runner-1", "once.example.org", 443, null);
    refuse("BypassCommand000000001", "ci-runner-1", "raw.example.net", 443, null);
    alerts.pipeInput("fp-bypass", Alert.firing("bypass", "BypassCommand000000001").fingerprint("fp-bypass")
        .severity(Alert.Severity.PAGE).agentId("ci-runner-1").role("ci").host("raw.example.net").port(443)
        .firstSeen(T0.plusSeconds(30)).lastSeen(T0.plusSeconds(30)).summary("bypass").sampleEventIds(List.of()).build());
    refuse("ProbeCommand0000000001", "knockwatch-limit", "example.com", 443, null);

    List<Allowlist.RoleHosts> roles = suggest(null, null);
    assertThat(roles).extracting(Allowlist.RoleHosts::role).containsExactly("ci"); // the probe's refusal is left out
    Allowlist.RoleHosts ci = roles.get(0);
    assertThat(ci.allows()).containsExactly("api.github.com:443");
    assertThat(ci.hosts().get(0).target()).isEqualTo("objects.githubusercontent.com:443");
    Allowlist.Host release = ci.hosts().get(0);
    assertThat(release.commands()).isEqualTo(3);
    assertThat(release.tasks()).isEqualTo(2);
    assertThat(release.agents()).isEqualTo(2);
    assertThat(release.refusals()).isEqualTo(6);
    assertThat(release.proposed()).isTrue();
    assertThat(release.risks()).isEmpty();
    // never widened: no parent domain, no pattern proposed
    assertThat(ci.hosts()).filteredOn(Allowlist.Host::proposed).extracting(Allowlist.Host::target)
        .noneMatch(t -> t.contains("*") || t.equals("githubusercontent.com:443"));

    Allowlist.Host drift = host(ci, "api.github.com:443");
    assertThat(drift.inRole()).isTrue();
    assertThat(drift.risks()).extracting(Allowlist.Risk::code).contains("in-role");
    assertThat(host(ci, "169.254.169.254:80").proposed()).isFalse();
    assertThat(host(ci, "169.254.169.254:80").risks()).extracting(Allowlist.Risk::code).contains("sensitive-address");
    assertThat(host(ci, "bit.ly:443").risks()).extracting(Allowlist.Risk::code).contains("shortener");
    assertThat(host(ci, "bit.ly:443").proposed()).isFalse();
    assertThat(host(ci, "pastebin.com:443").proposed()).isFalse();
    assertThat(host(ci, "*.githubusercontent.com:443").proposed()).isFalse();
    assertThat(host(ci, "*.githubusercontent.com:443").risks()).extracting(Allowlist.Risk::code).contains("not-a-name");
    assertThat(host(ci, "8.8.8.8:53").proposed()).isTrue();
    assertThat(host(ci, "8.8.8.8:53").risks()).extracting(Allowlist.Risk::code).contains("ip-literal", "single-command");
    assertThat(host(ci, "once.example.org:443").risks()).extracting(Allowlist.Risk::code).containsExactly("single-command");
    Allowlist.Host bypassed = host(ci, "raw.example.net:443");
    assertThat(bypassed.proposed()).isFalse();
    assertThat(bypassed.risks()).extracting(Allowlist.Risk::note).anyMatch(n -> n.contains("bypass"));

    // one agent's view: only what ci-runner-2 was refused
    assertThat(suggest("ci", "ci-runner-2").get(0).hosts()).extracting(Allowlist.Host::target)
        .containsExactly("objects.githubusercontent.com:443");
    assertThat(suggest("coding-assistant", null)).isEmpty();
  }

  /** What a wall in audit mode let through (enforced: false) was refused by no one: neither needed here nor counted. */
  @Test
  void whatAWallOnlyAuditedIsNoRefusalOfTheRole() {
    for (int c = 0; c < 3; c++) {
      refuse("ReleaseDownload0000000" + c, "ci-runner-1", "objects.githubusercontent.com", 443, "task-" + c);
      Instant at = T0.plusSeconds(seq);
      violations.pipeInput("agent:ci-runner-1", Sanitize.event(ViolationEvent.builder().eventId("e" + seq++)
          .agentId("ci-runner-1").commandUnknown(true).source("hubble").kind(Kind.NETWORK).action("connect")
          .host("audited.example.org").port(443).enforced(false).observedAt(at).build()), at);
    }
    Allowlist.RoleHosts ci = suggest(null, null).get(0);
    assertThat(ci.hosts()).extracting(Allowlist.Host::target).contains("objects.githubusercontent.com:443")
        .doesNotContain("audited.example.org:443");
  }

  @Test
  void theOverviewCountsPerMinuteByKindAndClassAndAlertsOncePerFingerprint() {
    refuse("OverviewCommand0000001", "ci-runner-1", "169.254.169.254", 80, null);
    refuse("OverviewCommand0000001", "ci-runner-1", "evil.example", 443, null);
    refuse("OverviewCommand0000002", "ci-runner-2", "evil.example", 443, null);
    for (int i = 0; i < 3; i++) { // an alert and two updates of it: one alert
      alerts.pipeInput("fp-1", Alert.firing("off-role-host", "OverviewCommand0000001").fingerprint("fp-1")
          .severity(Alert.Severity.PAGE).agentId("ci-runner-1").role("ci").firstSeen(T0).lastSeen(T0.plusSeconds(i))
          .summary("s").sampleEventIds(List.of()).build());
    }
    ReadOnlyKeyValueStore<String, HourOverview> hours = store(DiscoverProcessor.OVERVIEW);
    ReadOnlyKeyValueStore<String, RoleHour> roleHours = store(DiscoverProcessor.ROLE_HOURS);
    Instant since = T0.minusSeconds(600);
    Instant until = T0.plusSeconds(600);
    Overview.Answer a = Overview.of(Buckets.read(List.of(hours), since, until), Buckets.read(List.of(roleHours), since, until),
        since, until, 10);
    assertThat(a.minutes()).isEqualTo(20);
    assertThat(a.refusals()).isEqualTo(3);
    int at = (int) ((T0.toEpochMilli() - a.start()) / 60_000);
    assertThat(a.series().get("network/cloud-metadata")[at]).isEqualTo(1);
    assertThat(a.series().get("network/-")[at]).isEqualTo(2);
    assertThat(a.agents()).extracting(Overview.Count::name).containsExactly("ci-runner-1", "ci-runner-2");
    assertThat(a.hosts().get(0).target()).isEqualTo("evil.example:443");
    assertThat(a.hosts().get(0).commands()).isEqualTo(2);
    assertThat(a.rules()).containsExactly(new Overview.Count("off-role-host", 1));
    assertThat(a.severities()).containsExactly(Map.entry("page", 1L));
  }

  @Test
  void anHourTheAgentStampedFarAheadOrBehindIsCountedNowSoBucketsStayBounded() {
    for (int i = 0; i < 200; i++) {
      Instant at = i % 2 == 0 ? Instant.parse("2999-01-01T00:00:00Z").plus(Duration.ofHours(i))
          : Instant.parse("1971-01-01T00:00:00Z").plus(Duration.ofHours(i));
      violations.pipeInput("StampedCommand00000001", Sanitize.event(ViolationEvent.builder().eventId("t" + i)
          .commandId("StampedCommand00000001").agentId("ci-runner-1").source("srt-violation").kind(Kind.NETWORK)
          .action("network-outbound").host("stamped.example").port(443).observedAt(at).build()), at);
    }
    List<String> keys = new java.util.ArrayList<>();
    ReadOnlyKeyValueStore<String, RoleHour> store = store(DiscoverProcessor.ROLE_HOURS);
    store.all().forEachRemaining(kv -> keys.add(kv.key));
    long now = Math.floorDiv(T0.plusSeconds(3600).toEpochMilli(), DiscoverProcessor.HOUR_MS);
    assertThat(keys).containsExactly(DiscoverProcessor.roleHourKey(now, "ci"));
    ReadOnlyKeyValueStore<String, HourOverview> hours = store(DiscoverProcessor.OVERVIEW);
    List<String> hourKeys = new java.util.ArrayList<>();
    hours.all().forEachRemaining(kv -> hourKeys.add(kv.key));
    assertThat(hourKeys).containsExactly(DiscoverProcessor.hourKey(now));
    // past the retention (30 days here), the sweep removes them
    driver.advanceWallClockTime(Duration.ofDays(31));
    assertThat(store.all().hasNext()).isFalse();
    assertThat(hours.all().hasNext()).isFalse();
  }

  @Test
  void hostileHostsAreKeptBoundedAndNeverProposedUnlessTheyAreNames() {
    Random r = new Random(48);
    String[] pieces = {"\u202e", "\u0000", "\ud800", "<img src=x onerror=alert(1)>", "*", " ", "..", "\n", "ÿ", "a"};
    for (int i = 0; i < 3000; i++) {
      StringBuilder h = new StringBuilder();
      int n = r.nextInt(6);
      for (int j = 0; j < n; j++) {
        h.append(pieces[r.nextInt(pieces.length)]);
      }
      if (i % 500 == 0) {
        h.append("x".repeat(70_000));
      }
      refuse("HostileCommand00000001", "ci-runner-6", h.append(".example").toString(), r.nextBoolean() ? 443 : null, null);
    }
    for (int c = 0; c < 3; c++) {
      refuse("NeededAfterFlood000000" + c, "ci-runner-1", "registry.example.org", 443, null);
    }
    Allowlist.RoleHosts ci = suggest("ci", null).get(0);
    assertThat(ci.hosts().get(0).target()).isEqualTo("registry.example.org:443");
    for (Allowlist.Host h : ci.hosts()) {
      assertThat(h.host().length()).isLessThanOrEqualTo(300);
      if (h.proposed()) {
        assertThat(h.host()).matches(Allowlist.NAME.pattern());
      }
    }
    ReadOnlyKeyValueStore<String, RoleHour> store = store(DiscoverProcessor.ROLE_HOURS);
    for (RoleHour hour : Buckets.read(List.of(store), T0.minusSeconds(60), T0.plusSeconds(7200))) {
      assertThat(hour.size()).isLessThanOrEqualTo(RoleHour.MAX_HOSTS);
    }
  }
}
