package dev.knockwatch.ingest.spi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.config.Key;
import dev.knockwatch.events.config.KeyValues;
import dev.knockwatch.events.config.YamlFile;
import dev.knockwatch.events.config.YamlNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** A source's agents: what a wall knows of whom it refused, to the agent, as the operator declares it. */
class IdentitiesTest {

  static final List<String> ATTRIBUTES = List.of("uid", "source", "prefix");
  static final Set<String> ADDRESSES = Set.of("source");

  private final List<String> problems = new ArrayList<>();

  private Identities read(String yaml) {
    YamlNode root = new YamlFile("sources.yaml", problems).parse(yaml).orElseThrow();
    Key<Identities> agents = Identities.key(ATTRIBUTES, ADDRESSES);
    return KeyValues.of(root, "source 1", List.of(agents)).orElseThrow().get(agents);
  }

  @Test
  void theFirstEntryWhoseEveryAttributeMatchesNamesTheAgent() {
    Identities agents = read("""
        agents:
          - {uid: "65534", prefix: "agent-egress-*", agent: ci-runner-1}
          - {source: 10.0.3.0/24, agent: build-farm}
          - {source: "::1", agent: loopback-agent}
          - {uid: "65534", agent: any-prefix}
        """);
    assertThat(problems).isEmpty();
    assertThat(agents.agentOf(Map.of("uid", "65534", "prefix", "agent-egress-deny: "))).contains("ci-runner-1");
    assertThat(agents.agentOf(Map.of("uid", "65534", "prefix", "other: "))).contains("any-prefix");
    assertThat(agents.agentOf(Map.of("source", "10.0.3.7"))).contains("build-farm");
    assertThat(agents.agentOf(Map.of("source", "10.0.4.7"))).isEmpty();
    // an address as the kernel writes it in full matches its short form, and a name is never resolved
    assertThat(agents.agentOf(Map.of("source", "0000:0000:0000:0000:0000:0000:0000:0001"))).contains("loopback-agent");
    assertThat(agents.agentOf(Map.of("source", "localhost"))).isEmpty();
    assertThat(agents.agentOf(Map.of("uid", "0"))).isEmpty();
    assertThat(agents.agentOf(Map.of())).isEmpty();
  }

  @Test
  void anAttributeOfSeveralValuesMatchesWhenOneOfThemDoes() {
    Identities agents = read("""
        agents:
          - {prefix: "app=agent-*", uid: "7", agent: agent-pods}
        """);
    assertThat(problems).isEmpty();
    assertThat(agents.agentOfAny(Map.of("prefix", List.of("ns=agents", "app=agent-runner"), "uid", List.of("7"))))
        .contains("agent-pods");
    // every attribute the entry names must still match, and no value of the list may stand for another attribute
    assertThat(agents.agentOfAny(Map.of("prefix", List.of("ns=agents", "app=agent-runner"), "uid", List.of("8"))))
        .isEmpty();
    assertThat(agents.agentOfAny(Map.of("prefix", List.of("ns=agents", "uid=7"), "uid", List.of("7")))).isEmpty();
    assertThat(agents.agentOfAny(Map.of("prefix", List.of(), "uid", List.of("7")))).isEmpty();
  }

  @Test
  void everyProblemIsAtItsLine() {
    read("""
        agents:
          - {uid: "1", agent: "../x"}
          - {colour: red, agent: a}
          - {source: not-an-address, agent: b}
          - {uid: "2"}
          - {agent: everything}
        """);
    assertThat(problems).containsExactly(
        "sources.yaml:2: source 1: agents 1: agent \"../x\" is no agent id: agentId must start with a letter or digit, not U+002E",
        "sources.yaml:3: source 1: agents 2: unknown attribute \"colour\" (known: uid, source, prefix, agent)",
        "sources.yaml:4: source 1: agents 3: source \"not-an-address\" is not an address or a CIDR block",
        "sources.yaml:5: source 1: agents 4: names no agent (agent: AGENT)",
        "sources.yaml:6: source 1: agents 5: names none of uid, source, prefix: it would match everything");
  }

  @Test
  void aWallsRefusalIsItsMappedAgentsWithNoCommandOrRefusedWithTheIdentityToKeyItsNotice() {
    Identities agents = read("agents:\n  - {uid: \"65534\", agent: ci-runner-1}\n");
    assertThat(Attribution.ofWall("netfilter", "uid=65534", Map.of("uid", "65534"), agents))
        .isEqualTo(new Attribution.Attributed("ci-runner-1", null, null));
    assertThat(Attribution.ofWall("netfilter", "uid=0", Map.of("uid", "0"), agents)).isEqualTo(new Attribution.Refused(
        dev.knockwatch.ingest.spi.Rejection.UNMAPPED_IDENTITY,
        "the source maps netfilter uid=0 to no agent: add it to its agents", "netfilter uid=0"));
    assertThat(Attribution.ofWall("netfilter", "uid=0", Map.of("uid", "0"), Identities.none()))
        .isInstanceOf(Attribution.Refused.class);
  }
}
