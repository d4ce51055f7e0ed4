package dev.knockwatch.streams.detect;

import dev.knockwatch.streams.state.WriteBackStore;
import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.AddressClass;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.DetectionTopology;
import dev.knockwatch.streams.lifecycle.AlertLifecycleProcessor.Clock;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.PolicyFiles;
import dev.knockwatch.streams.rules.PolicyLoader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.UnaryOperator;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Each detector, the lifecycle and cross-source dedup on a TopologyTestDriver (record cache on). */
class DetectorsTest {

  static final Instant T0 = Instant.parse("2026-11-29T18:45:00Z");
  static final String CMD = "xhfHytmXL-L6RsYw2CrSjA";
  static final String CMD2 = "zyZtvn-3BVrXFMyeoLjgiQ";
  static final String ROLES = "roles:\n  ci:\n    hosts: [\"registry.npmjs.org\", \"*.maven.org\"]\n"
      + "agents:\n  - match: \"ci-*\"\n    role: ci\n";

  @TempDir Path state;
  @TempDir Path rulesDir;
  TopologyTestDriver driver;
  TestInputTopic<String, ViolationEvent> in;
  TestOutputTopic<String, Alert> out;
  int seq;

  private void start(String rules, Clock clock) throws IOException {
    Files.writeString(rulesDir.resolve("rules.yaml"), rules);
    Files.writeString(rulesDir.resolve("roles.yaml"), ROLES);
    Policy policy = PolicyLoader.load(rulesDir);
    Properties p = DetectionTopology.streamsConfig("test", "unused:9092", state, Map.of());
    p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 10 * 1024 * 1024);
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
    driver = new TopologyTestDriver(DetectionTopology.buildTopology(policy, clock), p, T0);
    in = driver.createInputTopic(Topics.VIOLATIONS.name(), new StringSerializer(), Json.serde(ViolationEvent.class).serializer());
    out = driver.createOutputTopic(Topics.ALERTS.name(), new StringDeserializer(), Json.serde(Alert.class).deserializer());
  }

  @AfterEach
  void tearDown() {
    if (driver != null) {
      driver.close();
    }
  }

  private void send(String cmd, Instant at, UnaryOperator<ViolationEvent.Builder> f) {
    seq++;
    ViolationEvent.Builder b = ViolationEvent.builder().eventId("e" + seq).commandId(cmd).agentId("ci-runner-1")
        .source("srt-violation").kind(Kind.NETWORK).action("network-outbound").observedAt(at);
    in.pipeInput(cmd, f.apply(b).build(), at);
  }

  private void net(String cmd, Instant at, String host, int port) {
    send(cmd, at, b -> b.host(host).port(port));
  }

  // ---- off-role

  @Test
  void anOffRoleHostPagesOncePerCommandAndItsNextHostsUpdateThatAlert() throws IOException {
    start("rules:\n  - id: off-role-host\n    detector: off-role\n    severity: page\n", Clock.STREAM);
    net(CMD, T0, "evil.example", 443);
    net(CMD, T0.plusSeconds(1), "evil.example", 443);
    net(CMD, T0.plusSeconds(2), "other.example", 443);
    net(CMD2, T0.plusSeconds(3), "evil.example", 443);
    List<Alert> alerts = out.readValuesToList();
    assertThat(alerts).extracting(Alert::commandId, Alert::host).containsExactly(
        org.assertj.core.groups.Tuple.tuple(CMD, "evil.example"), org.assertj.core.groups.Tuple.tuple(CMD2, "evil.example"));
    assertThat(alerts).extracting(Alert::role).containsOnly("ci");
    assertThat(alerts.get(0).fingerprint()).isEqualTo(Alert.fingerprintOf("off-role-host", CMD));
    assertThat(alerts.get(0).summary()).isEqualTo("agent ci-runner-1 (role ci) tried evil.example:443, which its role does not allow");
    assertThat(alerts.get(0).distinctTargets()).isEqualTo(1);
    assertThat(alerts.get(0).policyVersion()).hasSize(12);
    net(CMD, T0.plusSeconds(40), "third.example", 443); // past the throttle: the update names the hosts
    Alert update = out.readValue();
    assertThat(update.fingerprint()).isEqualTo(alerts.get(0).fingerprint());
    assertThat(update.count()).isEqualTo(4);
    assertThat(update.targets()).extracting(Alert.Target::target, Alert.Target::count).containsExactly(
        org.assertj.core.groups.Tuple.tuple("evil.example:443", 2L), org.assertj.core.groups.Tuple.tuple("other.example:443", 1L),
        org.assertj.core.groups.Tuple.tuple("third.example:443", 1L));
    assertThat(update.distinctTargets()).isEqualTo(3);
    assertThat(update.lastTarget()).isEqualTo("third.example:443");
    assertThat(update.summary()).isEqualTo("agent ci-runner-1 (role ci) tried evil.example:443, which its role does not allow"
        + "; 3 targets in all, the last third.example:443");
    assertThat(out.isEmpty()).isTrue();
  }

  /** docs/TRUST.md: a line that claimed another identity pages, once a command, whatever it claims next. */
  @Test
  void aClaimedIdentityPagesOncePerCommandAndTheRefusalCountsAsTheLayoutSays() throws IOException {
    start("rules:\n  - id: identity-conflict\n    detector: identity-conflict\n    severity: page\n"
        + "  - id: off-role-host\n    detector: off-role\n    severity: page\n    except: {agent: \"knockwatch-guard\"}\n", Clock.STREAM);
    send(CMD, T0, b -> b.agentId("dev-bot-71").host("exfil.evil.test").port(443)
        .identityConflict(new ViolationEvent.IdentityClaim("knockwatch-guard", null)));
    send(CMD, T0.plusSeconds(1), b -> b.agentId("dev-bot-71").host("exfil.evil.test").port(443)
        .identityConflict(new ViolationEvent.IdentityClaim(null, "AAAAAAAAAAAAAAAAAAAAAA")));
    send(CMD2, T0.plusSeconds(2), b -> b.host("registry.npmjs.org").port(443));
    List<Alert> alerts = out.readValuesToList();
    assertThat(alerts).extracting(Alert::rule).containsExactlyInAnyOrder("identity-conflict", "off-role-host");
    Alert conflict = alerts.stream().filter(a -> a.rule().equals("identity-conflict")).findFirst().orElseThrow();
    assertThat(conflict.severity()).isEqualTo(Alert.Severity.PAGE);
    assertThat(conflict.commandId()).isEqualTo(CMD);
    assertThat(conflict.agentId()).isEqualTo("dev-bot-71");
    assertThat(conflict.summary()).isEqualTo("a srt-violation line of agent dev-bot-71 claims agentId \"knockwatch-guard\";"
        + " counted as its log layout says (docs/TRUST.md)");
    assertThat(alerts).filteredOn(a -> a.rule().equals("off-role-host")).singleElement()
        .satisfies(a -> assertThat(a.agentId()).isEqualTo("dev-bot-71"));
  }

  @Test
  void aRefusedHostInsideTheRoleIsDriftNotAPage() throws IOException {
    start("rules:\n  - id: off-role-host\n    detector: off-role\n", Clock.STREAM);
    net(CMD, T0, "registry.npmjs.org", 443);
    net(CMD, T0, "repo1.maven.org", 443);
    assertThat(out.isEmpty()).isTrue();
  }

  @Test
  void anAgentNoGlobMatchesHasTheDefaultRoleWhichAllowsNothing() throws IOException {
    start("rules:\n  - id: off-role-host\n    detector: off-role\n", Clock.STREAM);
    send(CMD, T0, b -> b.agentId("research-7").host("registry.npmjs.org").port(443));
    assertThat(out.readValuesToList()).extracting(Alert::role).containsExactly("default");
  }

  // ---- address-class

  @Test
  void aSensitiveAddressClassPagesFromSrtsWordsOrTheLiteral() throws IOException {
    start("rules:\n  - id: sensitive\n    detector: address-class\n    classes: [loopback, cloud-metadata]\n"
        + "    severity: critical\n", Clock.STREAM);
    send(CMD, T0, b -> b.host("metadata.example").port(80).addressClass(AddressClass.CLOUD_METADATA));
    net(CMD2, T0, "127.0.0.1", 8080);
    net(CMD2, T0, "93.184.216.34", 443);
    List<Alert> alerts = out.readValuesToList();
    assertThat(alerts).extracting(Alert::commandId, Alert::host)
        .containsExactly(org.assertj.core.groups.Tuple.tuple(CMD, "metadata.example"),
            org.assertj.core.groups.Tuple.tuple(CMD2, "127.0.0.1"));
    assertThat(alerts.get(0).summary()).isEqualTo("refused metadata.example:80: a cloud-metadata address");
    assertThat(alerts).extracting(Alert::severity).containsOnly(Alert.Severity.CRITICAL);
  }

  // ---- fs-guard

  @Test
  void guardedPathsPageAndOthersDoNot() throws IOException {
    start("rules:\n  - id: fs-guard\n    detector: fs-guard\n", Clock.STREAM);
    send(CMD, T0, b -> b.kind(Kind.FILESYSTEM).action("openat").path("/home/agent/.bashrc"));
    send(CMD, T0, b -> b.kind(Kind.FILESYSTEM).action("openat").path("/home/agent/notes.txt"));
    send(CMD, T0, b -> b.kind(Kind.FILESYSTEM).action("openat").path("/root/.ssh/id_ed25519"));
    send(CMD, T0, b -> b.kind(Kind.FILESYSTEM).action("openat").path("/work/repo/.git/hooks/pre-commit"));
    send(CMD, T0, b -> b.kind(Kind.FILESYSTEM).action("openat").path("/work/repo/.env.example"));
    assertThat(out.readValuesToList()).extracting(Alert::summary).containsExactly(
        "refused openat on /home/agent/.bashrc (guarded: .bashrc)");
    send(CMD, T0.plusSeconds(40), b -> b.kind(Kind.FILESYSTEM).action("openat").path("/home/agent/notes.txt"));
    send(CMD2, T0.plusSeconds(40), b -> b.kind(Kind.FILESYSTEM).action("openat").path("/home/agent/notes.txt"));
    Alert update = out.readValue(); // the throttle passed: the guarded paths so far, not the others
    assertThat(update.targets()).extracting(Alert.Target::target).containsExactly(
        "/home/agent/.bashrc", "/root/.ssh/id_ed25519", "/work/repo/.git/hooks/pre-commit");
    assertThat(out.isEmpty()).isTrue();
  }

  // ---- bypass

  @Test
  void aDirectDialSoonAfterAProxyRefusalIsABypass() throws IOException {
    start("rules:\n  - id: bypass\n    detector: bypass\n    within: 2m\n", Clock.STREAM);
    net(CMD, T0, "evil.example", 443);
    send(CMD, T0.plusSeconds(30), b -> b.source("strace").action("connect").syscall("connect")
        .errno("ENETUNREACH").host("93.184.216.34").port(443));
    List<Alert> alerts = out.readValuesToList();
    assertThat(alerts).hasSize(1);
    assertThat(alerts.get(0).summary())
        .isEqualTo("after the proxy refused evil.example:443, the command tried a direct dial to 93.184.216.34:443 30 s later");
  }

  @Test
  void theSameDoorAfterTheLimitOrToLoopbackIsNoBypass() throws IOException {
    start("rules:\n  - id: bypass\n    detector: bypass\n    within: 2m\n", Clock.STREAM);
    net(CMD, T0, "evil.example", 443);
    send(CMD, T0.plusSeconds(121), b -> b.source("strace").action("connect").syscall("connect").errno("ENETUNREACH")
        .host("93.184.216.34").port(443));
    net(CMD2, T0, "evil.example", 443);
    send(CMD2, T0.plusSeconds(5), b -> b.source("strace").action("connect").syscall("connect").errno("EPERM")
        .host("127.0.0.1").port(3128));
    assertThat(out.isEmpty()).isTrue();
  }

  @Test
  void withinCountsFromTheLastProxyRefusalOrUpToASecondBeforeIt() throws IOException {
    start("rules:\n  - id: bypass\n    detector: bypass\n    within: 2m\n", Clock.STREAM);
    net(CMD, T0, "evil.example", 443);
    net(CMD, T0.plusSeconds(90), "evil.example", 443);
    net(CMD, T0.plusMillis(90_500), "evil.example", 443); // within a second of the last: not written again
    send(CMD, T0.plusSeconds(210), b -> b.source("strace").action("connect").syscall("connect").errno("ENETUNREACH")
        .host("93.184.216.34").port(443));
    net(CMD2, T0, "evil.example", 443);
    send(CMD2, T0.plusSeconds(121), b -> b.source("strace").action("connect").syscall("connect").errno("ENETUNREACH")
        .host("93.184.216.34").port(443));
    assertThat(out.readValuesToList()).extracting(Alert::commandId, Alert::summary).containsExactly(
        org.assertj.core.groups.Tuple.tuple(CMD,
            "after the proxy refused evil.example:443, the command tried a direct dial to 93.184.216.34:443 120 s later"));
  }

  @Test
  void proxyRefusalsPastWithinAndSightingsPastTheirMinuteLeaveTheStores() throws IOException {
    start("rules:\n  - id: bypass\n    detector: bypass\n    within: 2m\n", Clock.STREAM);
    net(CMD, T0, "evil.example", 443);
    net(CMD2, T0.plusSeconds(50), "evil.example", 443);
    // the rules' state: the bypass rule's slice, each command's last proxy refusal, is the only one
    @SuppressWarnings("unchecked")
    WriteBackStore<DetectProcessor.Slices> refusals = (WriteBackStore<DetectProcessor.Slices>) driver.getStateStore("detect");
    org.apache.kafka.streams.state.KeyValueStore<String, String> sightings = driver.getKeyValueStore("cross-source-dedup");
    assertThat(refusals.size()).isEqualTo(2);
    assertThat(sightings.approximateNumEntries()).isEqualTo(2);

    String other = "CCCCCCCCCCCCCCCCCCCCCC";
    send(other, T0.plusSeconds(100), b -> b.kind(Kind.FILESYSTEM).action("file-write").path("/tmp/x"));
    assertThat(sightings.approximateNumEntries()).isEqualTo(1); // the first is past its minute
    assertThat(refusals.size()).isEqualTo(2);
    send(other, T0.plusSeconds(130), b -> b.kind(Kind.FILESYSTEM).action("file-write").path("/tmp/x"));
    assertThat(refusals.get(CMD)).isNull(); // 130 s old, past within
    assertThat(refusals.get(CMD2).slice(0)).isInstanceOf(BypassDetector.ProxyRefusal.class);
  }

  @Test
  void anotherPortASocksTunnelAndAShortenerAreDoorsToo() throws IOException {
    start("rules:\n  - id: bypass\n    detector: bypass\n", Clock.STREAM);
    net(CMD, T0, "evil.example", 443);
    net(CMD, T0.plusSeconds(1), "evil.example", 8443);
    net(CMD2, T0, "evil.example", 443);
    send(CMD2, T0.plusSeconds(2), b -> b.source("proxy-403").action("socks-tunnel").host("evil.example").port(443));
    String cmd3 = "CCCCCCCCCCCCCCCCCCCCCC";
    net(cmd3, T0, "evil.example", 443);
    net(cmd3, T0.plusSeconds(3), "bit.ly", 443);
    assertThat(out.readValuesToList()).extracting(Alert::summary).containsExactly(
        "after the proxy refused evil.example:443, the command tried another port of evil.example (8443 after 443) 1 s later",
        "after the proxy refused evil.example:443, the command tried a SOCKS tunnel to evil.example:443 2 s later",
        "after the proxy refused evil.example:443, the command tried a URL shortener (bit.ly) 3 s later");
  }

  // ---- cross-source dedup

  @Test
  void theSameRefusalFromTwoLogsCountsOnceAndTheAlertNamesBoth() throws IOException {
    start("rules:\n  - id: retry\n    detector: count\n    threshold: 3\n", Clock.STREAM);
    for (int i = 0; i < 3; i++) {
      Instant at = T0.plusSeconds(10L * i);
      net(CMD, at, "evil.example", 443);
      send(CMD, at.plusMillis(500), b -> b.source("squid").action("http-connect").host("evil.example").port(443));
    }
    List<Alert> alerts = out.readValuesToList();
    assertThat(alerts).hasSize(1);
    assertThat(alerts.get(0).count()).as("six lines, three refusals").isEqualTo(3);
    assertThat(alerts.get(0).sources()).containsExactly("srt-violation");
    net(CMD2, T0.plusSeconds(60), "x.example", 443); // stream time passes the 30 s throttle: the pending update
    Alert update = out.readValuesToList().get(0);
    assertThat(update.count()).isEqualTo(3);
    assertThat(update.sources()).containsExactly("srt-violation", "squid");
    send(CMD, T0.plusSeconds(61), b -> b.source("squid").action("http-connect").host("evil.example").port(443));
    net(CMD, T0.plusSeconds(61).plusMillis(100), "evil.example", 443);
    net(CMD2, T0.plusSeconds(100), "x.example", 443);
    assertThat(out.readValuesToList()).extracting(Alert::count).containsExactly(4L);
  }

  /**
   * A pod's one dial to 93.184.215.14:443, dropped: Hubble records each SYN the kernel sends again
   * (1 s apart, then 2 and 4: {@code tcp_syn_linear_timeouts}), and the node's nftables logs the
   * same packets. One attempt, counted once; a new dial (a new source port) and a proxy's requests
   * on one kept-alive connection each count.
   */
  @Test
  void oneConnectionsRefusalsAtTwoLayersAndItsResentSynsAreOneAttempt() throws IOException {
    start("rules:\n  - id: retry\n    detector: count\n    threshold: 2\n", Clock.STREAM);
    String agent = "agent:agent-runner";
    for (long s : new long[] {0, 1, 2, 3, 4, 6, 10}) {
      Instant at = T0.plusSeconds(s);
      send(agent, at, b -> packet(b, "hubble", "93.184.215.14", 40312));
      send(agent, at.plusMillis(300), b -> packet(b, "netfilter", "93.184.215.14", 40312));
    }
    assertThat(out.readValuesToList()).as("fourteen records of one dial").isEmpty();
    send(agent, T0.plusSeconds(121), b -> packet(b, "netfilter", "93.184.215.14", 40314));
    assertThat(out.readValuesToList()).singleElement().satisfies(a -> assertThat(a.count()).isEqualTo(2));
    // a proxy's two refused requests on one kept-alive connection: two attempts
    String proxied = "agent:build-farm";
    for (int i = 0; i < 2; i++) {
      send(proxied, T0.plusSeconds(300 + i), b -> packet(b, "smokescreen", "evil.example", 51000).method("GET")
          .url("http://evil.example/x"));
    }
    assertThat(out.readValuesToList()).filteredOn(a -> a.commandId().equals(proxied)).singleElement()
        .satisfies(a -> assertThat(a.count()).isEqualTo(2));
  }

  /**
   * Hubble with policy-verdict notifications on tells each dropped packet twice (the verdict and the
   * drop, a moment apart): one dial's seven SYNs are fourteen records, two counts at the most.
   */
  @Test
  void aPacketToldTwiceByOneLayerIsOneSighting() throws IOException {
    start("rules:\n  - id: retry\n    detector: count\n    threshold: 3\n", Clock.STREAM);
    String agent = "agent:agent-runner";
    for (long s : new long[] {0, 1, 2, 3, 4, 6, 10}) {
      send(agent, T0.plusSeconds(s), b -> packet(b, "hubble", "93.184.215.14", 40312));
      send(agent, T0.plusSeconds(s).plusMillis(1), b -> packet(b, "hubble", "93.184.215.14", 40312));
    }
    assertThat(out.readValuesToList()).as("fourteen records of one dial").isEmpty();
    send(agent, T0.plusSeconds(30), b -> packet(b, "hubble", "93.184.215.14", 40316));
    assertThat(out.readValuesToList()).singleElement().satisfies(a -> assertThat(a.count()).isEqualTo(3));
  }

  /**
   * An agent that binds one source port and dials again and again: its dials a second apart count
   * once per seven at the most (as the kernel's own resending of one dial), faster ones each, and
   * a dial from that port to another destination is never another's resending.
   */
  @Test
  void dialsFromOneBoundPortCountOncePerSevenAtMostAndAnotherDestinationAlways() throws IOException {
    start("rules:\n  - id: retry\n    detector: count\n    threshold: 3\n"
        + "  - id: sensitive\n    detector: address-class\n    classes: [cloud-metadata]\n", Clock.STREAM);
    String agent = "agent:agent-runner";
    for (int i = 0; i < 10; i++) {
      send(agent, T0.plusSeconds(i), b -> packet(b, "hubble", "93.184.215.14", 40400));
    }
    assertThat(out.readValuesToList()).as("ten dials, two attempts: seven, then three").isEmpty();
    // in the second attempt's span, from the same port: another destination, its own attempt
    send(agent, T0.plusSeconds(10), b -> packet(b, "hubble", "169.254.169.254", 40400)
        .addressClass(AddressClass.CLOUD_METADATA));
    assertThat(out.readValuesToList()).extracting(Alert::rule, Alert::count)
        .containsExactlyInAnyOrder(org.assertj.core.groups.Tuple.tuple("retry", 3L),
            org.assertj.core.groups.Tuple.tuple("sensitive", 1L));
    String flooder = "agent:flooder";
    for (int i = 0; i < 3; i++) {
      send(flooder, T0.plusSeconds(20).plusMillis(100L * i), b -> packet(b, "netfilter", "93.184.215.14", 40500));
    }
    assertThat(out.readValuesToList()).filteredOn(a -> a.commandId().equals(flooder)).extracting(Alert::count)
        .containsExactly(3L);
  }

  private static ViolationEvent.Builder packet(ViolationEvent.Builder b, String source, String host, int sourcePort) {
    return b.source(source).commandId(null).commandUnknown(true).agentId("agent-runner").action("connect")
        .protocol("tcp").sourceAddress("10.0.1.5").sourcePort(sourcePort).host(host).port(443);
  }

  // ---- drift

  /**
   * What a wall in audit mode let through (enforced: false) is no refusal: the count, off-role and
   * address-class rules never see it, nor does the dedup of one refusal at two layers; the drift
   * rule raises one info alert per agent, its next targets updating it.
   */
  @Test
  void whatAnAuditModeWallLetThroughIsDriftNotARefusal() throws IOException {
    start("rules:\n  - id: retry\n    detector: count\n    threshold: 2\n"
        + "  - id: off-role-host\n    detector: off-role\n"
        + "  - id: sensitive\n    detector: address-class\n    classes: [cloud-metadata]\n"
        + "  - id: policy-drift\n    detector: drift\n    severity: info\n", Clock.STREAM);
    String agent = "agent:agent-runner";
    send(agent, T0, b -> audited(b, "github.com", 443).reason("egress AUDIT"));
    send(agent, T0.plusSeconds(1), b -> audited(b, "github.com", 443));
    send(agent, T0.plusSeconds(2), b -> audited(b, "169.254.169.254", 80).addressClass(AddressClass.CLOUD_METADATA));
    List<Alert> drift = out.readValuesToList();
    assertThat(drift).singleElement().satisfies(a -> {
      assertThat(a.rule()).isEqualTo("policy-drift");
      assertThat(a.severity()).isEqualTo(Alert.Severity.INFO);
      assertThat(a.commandId()).isEqualTo(agent);
      assertThat(a.summary()).contains("hubble let github.com:443 through in audit mode", "egress AUDIT");
    });
    // a layer that enforces, refusing the connection audit mode let through: a refusal of its own, never
    // another layer's copy of a refusal
    send(agent, T0.plusMillis(1300), b -> audited(b, "github.com", 443).source("netfilter").enforced(null));
    assertThat(out.readValuesToList()).extracting(Alert::rule).containsExactly("off-role-host");
    // the drift alert's later targets update it
    net(CMD2, T0.plusSeconds(90), "x.example", 443); // stream time passes the throttle: the pending update
    List<Alert> after = out.readValuesToList().stream().filter(a -> a.commandId().equals(agent)).toList();
    assertThat(after).extracting(Alert::rule).containsExactly("policy-drift");
    assertThat(after).filteredOn(a -> a.rule().equals("policy-drift")).singleElement()
        .satisfies(a -> assertThat(a.count()).isEqualTo(3));
  }

  private static ViolationEvent.Builder audited(ViolationEvent.Builder b, String host, int port) {
    return b.source("hubble").commandId(null).commandUnknown(true).agentId("agent-runner").action("connect")
        .protocol("tcp").sourceAddress("10.0.1.5").sourcePort(40312).host(host).port(port).enforced(false);
  }

  // ---- lifecycle

  @Test
  void anUpdateNamesEverySourceOfItsHitsAndAtMostFiveSampleEvents() throws IOException {
    start("rules:\n  - id: off-role-host\n    detector: off-role\n", Clock.STREAM);
    net(CMD, T0, "evil.example", 443); // e1
    for (int i = 1; i <= 6; i++) { // e2..e7, 3 s apart: within the throttle, and no two are one refusal seen twice
      String source = i == 3 ? "squid" : "srt-violation";
      send(CMD, T0.plusSeconds(3L * i), b -> b.source(source).host("evil.example").port(443));
    }
    net(CMD2, T0.plusSeconds(120), "x.example", 443); // stream time passes the throttle: the pending update
    List<Alert> alerts = out.readValuesToList().stream().filter(a -> a.commandId().equals(CMD)).toList();
    assertThat(alerts).hasSize(2);
    assertThat(alerts.get(0).sources()).containsExactly("srt-violation");
    assertThat(alerts.get(0).sampleEventIds()).containsExactly("e1");
    Alert update = alerts.get(1);
    assertThat(update.count()).isEqualTo(7);
    assertThat(update.sources()).containsExactly("srt-violation", "squid");
    assertThat(update.sampleEventIds()).containsExactly("e1", "e2", "e3", "e4", "e5");
  }

  // ---- wall-breach

  private void probe(String cmd, Instant at, String name, boolean refused) {
    send(cmd, at, b -> b.source("probe-result").agentId("probe").action(name).host("example.com").port(80)
        .probe(new ViolationEvent.ProbeResult(name, "403 blocked-by-allowlist", refused ? "403" : "200 OK", refused)));
  }

  @Test
  void aGuardProbeTheSandboxLetThroughIsCriticalAndARefusedOneIsQuiet() throws IOException {
    start("rules:\n  - id: wall-breach\n    detector: wall-breach\n    severity: critical\n"
        + "  - id: off-role-host\n    detector: off-role\n    severity: page\n", Clock.STREAM);
    probe(CMD, T0, "plain-http", true);
    assertThat(out.isEmpty()).isTrue();
    probe(CMD2, T0.plusSeconds(1), "plain-http", false);
    probe(CMD2, T0.plusSeconds(2), "https-connect", false);
    List<Alert> alerts = out.readValuesToList();
    assertThat(alerts).extracting(Alert::rule).containsOnly("wall-breach");
    assertThat(alerts).extracting(Alert::commandId).containsOnly(CMD2);
    // one alert for the command's episode: the second probe through the wall updates it
    assertThat(alerts).extracting(Alert::fingerprint).containsExactly(Alert.fingerprintOf("wall-breach", CMD2));
    assertThat(alerts.get(0).severity().name()).isEqualTo("CRITICAL");
    assertThat(alerts.get(0).summary()).isEqualTo("guard probe plain-http was not refused: expected 403 blocked-by-allowlist, "
        + "observed 200 OK — the sandbox let it through");
    probe(CMD, T0.plusSeconds(60), "plain-http", true); // stream time passes the throttle
    Alert update = out.readValue();
    assertThat(update.fingerprint()).isEqualTo(alerts.get(0).fingerprint());
    assertThat(update.targets()).extracting(Alert.Target::target).containsExactly("plain-http", "https-connect");
    assertThat(update.distinctTargets()).isEqualTo(2);
    assertThat(update.lastTarget()).isEqualTo("https-connect");
  }

  @Test
  void probeResultsAreNoRefusals() throws IOException {
    // a not-refused probe to an off-role host is a breach, not an off-role page, and counts toward no window
    start("rules:\n  - id: retry\n    detector: count\n    window: 5m\n    threshold: 2\n"
        + "  - id: off-role-host\n    detector: off-role\n", Clock.STREAM);
    for (int i = 0; i < 5; i++) {
      probe(CMD, T0.plusSeconds(i), "plain-http", i % 2 == 0);
    }
    assertThat(out.isEmpty()).isTrue();
  }

  @Test
  void anAlertResolvesAfterResolveAfterWithoutHitsOnStreamTime() throws IOException {
    start("rules:\n  - id: off-role-host\n    detector: off-role\n    resolveAfter: 5m\n", Clock.STREAM);
    net(CMD, T0, "evil.example", 443);
    net(CMD2, T0.plusSeconds(240), "registry.npmjs.org", 443); // in role: no hit, stream time moves
    assertThat(out.readValuesToList()).extracting(Alert::status).containsExactly(Alert.Status.FIRING);
    net(CMD2, T0.plusSeconds(301), "registry.npmjs.org", 443);
    List<Alert> resolved = out.readValuesToList();
    assertThat(resolved).extracting(Alert::status).containsExactly(Alert.Status.RESOLVED);
    net(CMD, T0.plusSeconds(400), "evil.example", 443);
    List<Alert> again = out.readValuesToList();
    assertThat(again).extracting(Alert::status).as("a later hit fires anew").containsExactly(Alert.Status.FIRING);
    assertThat(again.get(0).count()).as("a new alert, not the resolved one's update").isEqualTo(1);
    assertThat(again.get(0).firstSeen()).isEqualTo(T0.plusSeconds(400));
  }

  @Test
  void aThrottledUpdateReachesTheStoreAtTheNextSweep() throws IOException {
    start("rules:\n  - id: off-role-host\n    detector: off-role\n", Clock.STREAM);
    net(CMD, T0, "evil.example", 443);
    // within the 30 s throttle, and before the next sweep (each second of stream time): not stored yet
    net(CMD, T0.plusMillis(300), "evil.example", 443);
    net(CMD, T0.plusMillis(600), "evil.example", 443);
    assertThat(storedCounts()).containsExactly(1L);
    net(CMD2, T0.plusSeconds(2), "registry.npmjs.org", 443); // in role: only stream time moves, the sweep runs
    assertThat(storedCounts()).containsExactly(3L);
    assertThat(out.readValuesToList()).extracting(Alert::count).containsExactly(1L);
  }

  /** The counts of CMD's alerts in the lifecycle's store. */
  private List<Long> storedCounts() {
    org.apache.kafka.streams.state.KeyValueStore<String, dev.knockwatch.streams.lifecycle.AlertState> store =
        driver.getKeyValueStore(dev.knockwatch.streams.lifecycle.AlertLifecycleProcessor.STORE);
    List<Long> counts = new java.util.ArrayList<>();
    try (var it = store.all()) {
      it.forEachRemaining(kv -> {
        if (kv.value.alert().commandId().equals(CMD)) {
          counts.add(kv.value.alert().count());
        }
      });
    }
    return counts;
  }

  @Test
  void liveAlertsResolveOnTheWallClockEvenWhenNothingArrives() throws IOException {
    start("rules:\n  - id: off-role-host\n    detector: off-role\n    resolveAfter: 10m\n", Clock.WALL);
    net(CMD, T0, "evil.example", 443);
    assertThat(out.readValuesToList()).extracting(Alert::status).containsExactly(Alert.Status.FIRING);
    driver.advanceWallClockTime(Duration.ofMinutes(9));
    assertThat(out.isEmpty()).isTrue();
    driver.advanceWallClockTime(Duration.ofMinutes(2));
    assertThat(out.readValuesToList()).extracting(Alert::status).containsExactly(Alert.Status.RESOLVED);
  }

  @Test
  void shadowRulesWriteMarkedAlerts() throws IOException {
    start("rules:\n  - id: off-role-host\n    detector: off-role\n    mode: shadow\n", Clock.STREAM);
    net(CMD, T0, "evil.example", 443);
    assertThat(out.readValuesToList()).extracting(Alert::shadow).containsExactly(true);
  }

  @Test
  void matchLimitsARuleToWhatItNames() throws IOException {
    start("rules:\n  - id: retry\n    detector: count\n    threshold: 2\n    match:\n      source: strace\n", Clock.STREAM);
    net(CMD, T0, "evil.example", 443);
    net(CMD, T0.plusSeconds(1), "evil.example", 443);
    assertThat(out.isEmpty()).isTrue();
    send(CMD2, T0.plusSeconds(2), b -> b.source("strace").action("connect").syscall("connect").errno("EPERM").host("10.0.0.1").port(22));
    send(CMD2, T0.plusSeconds(3), b -> b.source("strace").action("connect").syscall("connect").errno("EPERM").host("10.0.0.1").port(22));
    assertThat(out.readValuesToList()).extracting(Alert::commandId).containsExactly(CMD2);
  }

  // ---- the published policy

  @Test
  void theRolesPublishedOnThePolicyTopicApplyToEveryInstance() throws IOException {
    start("rules:\n  - id: off-role-host\n    detector: off-role\n", Clock.STREAM);
    String roles = ROLES.replace("\"*.maven.org\"", "\"*.maven.org\", \"evil.example\"");
    TestInputTopic<String, PolicyFiles> policy = driver.createInputTopic(Topics.POLICY.name(), new StringSerializer(),
        Json.serde(PolicyFiles.class).serializer());
    PolicyFiles published = new PolicyFiles("v2", "rules:\n  - id: off-role-host\n    detector: off-role\n", roles);
    policy.pipeInput(PolicyFiles.KEY, published);
    net(CMD, T0, "evil.example", 443);
    net(CMD, T0, "other.example", 443);
    List<Alert> alerts = out.readValuesToList();
    assertThat(alerts).extracting(Alert::host).containsExactly("other.example");
    assertThat(alerts).extracting(Alert::policyVersion)
        .containsExactly(PolicyLoader.load(published, "knockwatch.policy").version());
  }

  @Test
  void aPublishedPolicyThatDoesNotLoadIsIgnored() throws IOException {
    start("rules:\n  - id: off-role-host\n    detector: off-role\n", Clock.STREAM);
    TestInputTopic<String, PolicyFiles> policy = driver.createInputTopic(Topics.POLICY.name(), new StringSerializer(),
        Json.serde(PolicyFiles.class).serializer());
    policy.pipeInput(PolicyFiles.KEY, new PolicyFiles("broken", "rules: [", "roles: {}"));
    net(CMD, T0, "evil.example", 443);
    assertThat(out.readValuesToList()).extracting(Alert::policyVersion).doesNotContain("broken").hasSize(1);
  }
}
