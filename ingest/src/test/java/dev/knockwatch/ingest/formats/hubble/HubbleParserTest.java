package dev.knockwatch.ingest.formats.hubble;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.AddressClass;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.events.config.KeyValues;
import dev.knockwatch.events.config.YamlFile;
import dev.knockwatch.ingest.Hostile;
import dev.knockwatch.ingest.spi.FileOptions;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.SourceLine;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Hubble's policy drops, and nothing that only looks like one: only a {@code DROPPED} flow whose drop
 * reason is policy's is a refusal, of the agent the source maps the sending pod to; what the agent
 * may choose (its pod's name and labels where it can create pods, the DNS names it looked up) is read
 * as a value, made safe and bounded, never as a field or a line, and hostile lines around real ones
 * hide none of them.
 */
class HubbleParserTest {

  /**
   * A drop as Hubble v1.19.4's {@code -o json} writes it (samples/README.md): verdict, drop reason,
   * event type, direction, pod name, a label, the destination's DNS names and the denying policy's
   * name to fill in.
   */
  static final String FLOW = "{\"flow\":{\"time\":\"2026-12-05T10:40:07.118530412Z\",\"uuid\":\"0a7d5e2c\","
      + "\"verdict\":%s,\"drop_reason\":181,\"IP\":{\"source\":\"10.244.1.60\",\"destination\":\"104.20.68.143\","
      + "\"ipVersion\":\"IPv4\"},\"l4\":{\"TCP\":{\"source_port\":52210,\"destination_port\":443,\"flags\":{\"SYN\":true}}},"
      + "\"source\":{\"ID\":1412,\"identity\":48213,\"cluster_name\":\"knock\",\"namespace\":\"agents\","
      + "\"labels\":[\"k8s:io.kubernetes.pod.namespace=agents\",%s],\"pod_name\":%s},"
      + "\"destination\":{\"identity\":2,\"labels\":[\"reserved:world\"]},\"Type\":\"L3_L4\","
      + "\"node_name\":\"kind-knock/kind-worker\",\"destination_names\":[%s],\"event_type\":{\"type\":5},"
      + "\"traffic_direction\":%s,\"drop_reason_desc\":%s,\"Summary\":\"TCP Flags: SYN\","
      + "\"egress_denied_by\":[{\"name\":%s,\"namespace\":\"agents\",\"revision\":\"14\",\"kind\":\"CiliumNetworkPolicy\"}]},"
      + "\"node_name\":\"kind-knock/kind-worker\",\"time\":\"2026-12-05T10:40:07.118530412Z\"}";
  static final Instant NOW = Instant.parse("2026-12-06T10:00:00Z");

  private final LineParser parser = parser("""
      agents:
        - {namespace: agents, label: "k8s:app=agent-runner", agent: agent-runner}
        - {namespace: default, pod_name: "xwing*", agent: xwing}
        - {identity: "51877", agent: ledger}
        - {source_ip: 10.244.9.0/24, agent: build-farm}
      """);

  static LineParser parser(String yaml) {
    HubbleFormat f = new HubbleFormat();
    List<String> problems = new ArrayList<>();
    KeyValues with = KeyValues.of(new YamlFile("sources.yaml", problems).parse(yaml).orElseThrow(), "source 1", f.keys())
        .orElseThrow();
    assertThat(problems).isEmpty();
    return f.parser(new FileOptions(with, "hubble/flows.jsonl", "hubble", other -> false));
  }

  static String flow(String verdict, String drop, String direction, String label, String pod, String name,
      String policy) {
    return FLOW.formatted(Hostile.json(verdict), Hostile.json(label), Hostile.json(pod), Hostile.json(name),
        Hostile.json(direction), Hostile.json(drop), Hostile.json(policy));
  }

  static String denied(String label, String pod, String name, String policy) {
    return flow("DROPPED", "POLICY_DENY", "EGRESS", label, pod, name, policy);
  }

  static String denied() {
    return denied("k8s:app=agent-runner", "agent-runner-6c9f7d5b8-x2lqp", "pastebin.com", "agents-deny-paste");
  }

  private Parsed parse(String line) {
    return parser.parse(new SourceLine("hubble/flows.jsonl", 0, line, "hubble", null, "host-a", NOW));
  }

  private ViolationEvent event(String line) {
    Parsed p = parse(line);
    assertThat(p).as(line).isInstanceOf(Parsed.Events.class);
    return ((Parsed.Events) p).events().get(0);
  }

  @Test
  void aPolicyDropIsItsPodsMappedAgentsWithTheDestinationAsTargetAndNoCommand() {
    ViolationEvent e = event(denied());
    assertThat(e.agentId()).isEqualTo("agent-runner");
    assertThat(e.commandId()).isNull();
    assertThat(e.commandUnknown()).isTrue();
    assertThat(e.source()).isEqualTo("hubble");
    assertThat(e.host()).isEqualTo("pastebin.com");
    assertThat(e.port()).isEqualTo(443);
    assertThat(e.addressClass()).isEqualTo(AddressClass.PUBLIC);
    assertThat(e.protocol()).isEqualTo("tcp");
    assertThat(e.action()).isEqualTo("connect");
    assertThat(e.sourceAddress()).isEqualTo("10.244.1.60");
    assertThat(e.sourcePort()).isEqualTo(52210);
    assertThat(e.reason()).isEqualTo("egress POLICY_DENY by CiliumNetworkPolicy agents/agents-deny-paste");
    assertThat(e.subject()).isEqualTo(new ViolationEvent.Subject("hubble", "pod=agents/agent-runner-6c9f7d5b8-x2lqp"));
    assertThat(e.observedAt()).isEqualTo(Instant.parse("2026-12-05T10:40:07.118530412Z"));
    // no DNS name: the address is the target; a default-deny drop names no policy
    ViolationEvent noName = event(denied().replace("\"destination_names\":[\"pastebin.com\"],", "")
        .replace("\"POLICY_DENY\"", "\"POLICY_DENIED\"").replaceAll(",\"egress_denied_by\":\\[[^]]*\\]", ""));
    assertThat(noName.host()).isEqualTo("104.20.68.143");
    assertThat(noName.reason()).isEqualTo("egress POLICY_DENIED");
    // a flow with only the deprecated number of its drop reason
    assertThat(event(denied().replace(",\"drop_reason_desc\":\"POLICY_DENY\"", "")).agentId()).isEqualTo("agent-runner");
    // the CLI's legacy output: the flow alone
    String bare = denied().substring("{\"flow\":".length(), denied().indexOf(",\"node_name\":\"kind-knock/kind-worker\",\"time\""));
    assertThat(event(bare).agentId()).isEqualTo("agent-runner");
    // UDP and ICMP
    ViolationEvent dns = event(denied().replace("{\"TCP\":{\"source_port\":52210,\"destination_port\":443,\"flags\":{\"SYN\":true}}}",
        "{\"UDP\":{\"source_port\":39117,\"destination_port\":53}}"));
    assertThat(dns.action()).isEqualTo("sendto");
    assertThat(dns.port()).isEqualTo(53);
    ViolationEvent ping = event(denied().replace("{\"TCP\":{\"source_port\":52210,\"destination_port\":443,\"flags\":{\"SYN\":true}}}",
        "{\"ICMPv4\":{\"type\":8}}"));
    assertThat(ping.protocol()).isEqualTo("icmpv4");
    assertThat(ping.port()).isNull();
    assertThat(ping.sourcePort()).isNull();
  }

  @Test
  void everyAttributeAnEntryNamesMustMatchAndALabelIsOneOfThePods() {
    // the namespace without the label is not agent-runner
    assertThat(parse(denied("k8s:app=other", "p", "x.example", "p"))).isInstanceOf(Parsed.Rejected.class);
    assertThat(event(denied().replace("\"namespace\":\"agents\",\"labels\"", "\"namespace\":\"default\",\"labels\"")
        .replace("agent-runner-6c9f7d5b8-x2lqp", "xwing")).agentId()).isEqualTo("xwing");
    // a label's glob is the whole label, not a part of it
    assertThat(parse(denied("k8s:app=agent-runner-2", "p", "x.example", "p"))).isInstanceOf(Parsed.Rejected.class);
    // the identity number, and the address in a block, each alone
    String ingress = denied().replace("\"namespace\":\"agents\",\"labels\"", "\"namespace\":\"payments\",\"labels\"")
        .replace("\"identity\":48213", "\"identity\":51877");
    assertThat(event(ingress).agentId()).isEqualTo("ledger");
    assertThat(event(ingress).subject().identity()).isEqualTo("pod=payments/agent-runner-6c9f7d5b8-x2lqp");
    String fromBlock = denied("k8s:app=x", "", "x.example", "p").replace("10.244.1.60", "10.244.9.4")
        .replace("\"identity\":48213", "\"identity\":7");
    ViolationEvent farm = event(fromBlock);
    assertThat(farm.agentId()).isEqualTo("build-farm");
    assertThat(farm.subject().identity()).isEqualTo("identity=7");
  }

  @Test
  void whatOnlyLooksLikeAPolicyDropIsNone() {
    String drop = denied();
    assertThat(parse(drop.replace("\"DROPPED\"", "\"FORWARDED\""))).isEqualTo(Parsed.skipped("forwarded"));
    assertThat(parse(drop.replace("\"DROPPED\"", "\"REDIRECTED\""))).isEqualTo(Parsed.skipped("forwarded"));
    // audit mode: let through, the drop's event as drift (enforced: false), AUDIT its drop reason
    unenforcedTwin(parse(drop.replace("\"DROPPED\"", "\"AUDIT\"")), parse(drop));
    assertThat(((Parsed.Events) parse(drop.replace("\"DROPPED\"", "\"AUDIT\""))).events().get(0).reason()).contains("AUDIT");
    assertThat(parse(drop.replace("\"DROPPED\"", "\"ERROR\""))).isEqualTo(Parsed.skipped("other-verdict"));
    assertThat(parse(drop.replace("\"verdict\":\"DROPPED\",", ""))).isEqualTo(Parsed.skipped("other-verdict"));
    assertThat(parse(drop.replace("\"verdict\":\"DROPPED\"", "\"verdict\":2"))).isEqualTo(Parsed.skipped("other-verdict"));
    assertThat(parse(drop.replace("\"POLICY_DENY\"", "\"CT_MAP_INSERTION_FAILED\"").replace("\"drop_reason\":181",
        "\"drop_reason\":155"))).isEqualTo(Parsed.skipped("other-drop"));
    assertThat(parse(drop.replace("\"POLICY_DENY\"", "\"AUTH_REQUIRED\""))).isEqualTo(Parsed.skipped("other-drop"));
    assertThat(parse("{\"lost_events\":{\"source\":\"PERF_EVENT_RING_BUFFER\",\"num_events_lost\":\"12\",\"cpu\":1},"
        + "\"node_name\":\"n\",\"time\":\"2026-12-05T10:40:12Z\"}")).isEqualTo(Parsed.skipped("other-event"));
    assertThat(parse("{\"node_status\":{\"state_change\":\"NODE_CONNECTED\",\"node_names\":[\"n\"]}}"))
        .isEqualTo(Parsed.skipped("other-event"));
    assertThat(parse("Dec  5 10:40:07.118: agents/agent-runner:52210 (ID:48213) <> 104.20.68.143:443 (world)"
        + " policy-verdict:none EGRESS DENIED (TCP Flags: SYN)")).isEqualTo(Parsed.skipped("not-json"));
    // a field Hubble writes as an object, written otherwise; a line cut short; JSON that holds no flow
    assertThat(parse(drop.replace("{\"flow\":{", "{\"flow\":[{").replace("},\"node_name\":\"kind-knock/kind-worker\",\"time\"",
        "}],\"node_name\":\"kind-knock/kind-worker\",\"time\""))).isInstanceOf(Parsed.Rejected.class);
    assertThat(parse(drop.substring(0, drop.length() / 2))).isInstanceOf(Parsed.Rejected.class);
    assertThat(parse("{\"level\":\"info\",\"msg\":\"POLICY_DENIED\"}")).isInstanceOf(Parsed.Rejected.class);
    // a DNS name and a pod name holding a forged drop are values inside a forwarded flow's strings: still forwarded
    String forged = "x\"],\"verdict\":\"DROPPED\",\"drop_reason_desc\":\"POLICY_DENIED\",\"destination_names\":[\"y";
    assertThat(parse(flow("FORWARDED", "", "EGRESS", "k8s:app=agent-runner", forged, forged, forged)))
        .isEqualTo(Parsed.skipped("forwarded"));
  }

  @Test
  void anUnmappedPodIsRefusedWithWhoCiliumSaysItIs() {
    String ci = denied().replace("\"namespace\":\"agents\",\"labels\"", "\"namespace\":\"ci\",\"labels\"")
        .replace("agent-runner-6c9f7d5b8-x2lqp", "build-5f7c9-qz8wd");
    assertThat(parse(ci)).isInstanceOfSatisfying(Parsed.Rejected.class, r -> {
      assertThat(r.code().code()).isEqualTo("unmapped-identity");
      assertThat(r.identity()).isEqualTo("hubble pod=ci/build-5f7c9-qz8wd");
      assertThat(r.at()).isEqualTo(Instant.parse("2026-12-05T10:40:07.118530412Z"));
    });
    // a flow that knows no pod: its identity, else its address
    String noPod = denied("k8s:app=x", "", "x.example", "p").replace("\"namespace\":\"agents\",", "");
    assertThat(parse(noPod)).isInstanceOfSatisfying(Parsed.Rejected.class,
        r -> assertThat(r.identity()).isEqualTo("hubble identity=48213"));
    assertThat(parse(noPod.replace("\"identity\":48213,", ""))).isInstanceOfSatisfying(Parsed.Rejected.class,
        r -> assertThat(r.identity()).isEqualTo("hubble src=10.244.1.60"));
  }

  /**
   * Hostile values in every field an agent may choose (its pod's name and labels, the DNS name it looked
   * up, a policy's name where it may write policies) around the real drops of two agents: every real
   * drop is an event of its agent, a hostile drop of a mapped pod is still one event with safe, bounded
   * text, and no line stops the parser.
   */
  @Test
  void hostileValuesHideNoDropAndEscapeNothing() {
    Random random = new Random(65);
    Hostile h = new Hostile(65);
    int real = 0;
    int hostile = 0;
    for (int i = 0; i < 20_000; i++) {
      int kind = random.nextInt(4);
      if (kind == 0) {
        boolean first = random.nextBoolean();
        String line = first ? denied() : denied().replace("\"namespace\":\"agents\",\"labels\"",
            "\"namespace\":\"default\",\"labels\"").replace("agent-runner-6c9f7d5b8-x2lqp", "xwing-" + random.nextInt(99));
        assertThat(event(line).agentId()).isEqualTo(first ? "agent-runner" : "xwing");
        real++;
      } else if (kind == 1) {
        String line = denied(random.nextBoolean() ? "k8s:app=agent-runner" : h.text(), h.text(),
            random.nextBoolean() ? h.hostPort() : h.text(), h.text())
            .replace("\"labels\":[\"k8s:io.kubernetes.pod.namespace=agents\",",
                "\"labels\":[\"k8s:io.kubernetes.pod.namespace=agents\",\"k8s:app=agent-runner\",");
        Parsed p = parse(line);
        assertThat(p).as("a drop of a mapped pod is one event, whatever the pod's name and labels: %s", p)
            .isInstanceOf(Parsed.Events.class);
        ViolationEvent e = ((Parsed.Events) p).events().get(0);
        assertThat(e.agentId()).isEqualTo("agent-runner");
        for (String text : new String[] {e.host(), e.reason(), e.subject().identity()}) {
          if (text != null) {
            assertThat(text).doesNotContainPattern("[\\x00-\\x1f\\x7f\\u202a-\\u202e\\u2066-\\u2069\\u2028\\u2029]");
            assertThat(text.length()).isLessThanOrEqualTo(1025);
          }
        }
        hostile++;
      } else {
        // hostile text anywhere in a line, or a JSON object of hostile keys and values around a forged verdict
        String line = random.nextBoolean() ? h.text()
            : "{" + Hostile.json(h.text()) + ":" + Hostile.json(h.text()) + ",\"verdict\":\"DROPPED\"}";
        Parsed p = parse(line);
        assertThat(p).isNotInstanceOf(Parsed.Events.class);
      }
    }
    assertThat(real).isGreaterThan(4_000);
    assertThat(hostile).isGreaterThan(4_000);
  }

  /** The one event of an audit's line: the enforced line's, but {@code enforced: false}. */
  private static void unenforcedTwin(Parsed audited, Parsed enforced) {
    ViolationEvent refusal = ((Parsed.Events) enforced).events().get(0);
    assertThat(refusal.enforced()).isNull();
    assertThat(audited).isInstanceOfSatisfying(Parsed.Events.class, p -> assertThat(p.events()).singleElement()
        .satisfies(e -> {
          assertThat(e.enforced()).isFalse();
          assertThat(e.unenforced()).isTrue();
          assertThat(e.toBuilder().enforced(null).reason(refusal.reason()).build()).isEqualTo(refusal);
        }));
  }
}
