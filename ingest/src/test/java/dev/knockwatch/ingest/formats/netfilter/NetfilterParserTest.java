package dev.knockwatch.ingest.formats.netfilter;

import static org.assertj.core.api.Assertions.assertThat;

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
 * The kernel's refusals, and nothing that only looks like them: a LOG line is read only where its
 * carrier says the kernel wrote it and its message starts with a listed prefix; the same text in
 * another writer's line (a program's message, a file name an audit line quotes, a user-space
 * write to /dev/kmsg, a syslog line with a process id) is never a refusal, and hostile lines
 * around real ones hide none of them.
 */
class NetfilterParserTest {

  static final String LOG = "agent-egress-deny: IN= OUT=lo SRC=10.0.3.7 DST=93.184.215.14 LEN=60 TOS=0x00 PREC=0x00"
      + " TTL=64 ID=40627 DF PROTO=TCP SPT=35252 DPT=443 WINDOW=65495 RES=0x00 SYN URGP=0 UID=%d GID=%d ";
  static final Instant NOW = Instant.parse("2026-12-06T04:20:00Z");

  private final LineParser parser = parser("""
      prefixes: ["agent-egress-deny: "]
      agents:
        - {uid: "65534", agent: sandbox-runner-1}
        - {uid: "1001", agent: sandbox-runner-2}
        - {source: 10.0.4.0/24, agent: build-farm}
      """);

  static LineParser parser(String yaml) {
    NetfilterFormat f = new NetfilterFormat();
    List<String> problems = new ArrayList<>();
    KeyValues with = KeyValues.of(new YamlFile("sources.yaml", problems).parse(yaml).orElseThrow(), "source 1", f.keys())
        .orElseThrow();
    assertThat(problems).isEmpty();
    return f.parser(new FileOptions(with, "kernel/kern.log", "kern", other -> false));
  }

  private Parsed parse(String line) {
    return parser.parse(new SourceLine("kernel/kern.log", 0, line, "kernel", null, "host-a", NOW));
  }

  private ViolationEvent event(String line) {
    Parsed p = parse(line);
    assertThat(p).as(line).isInstanceOf(Parsed.Events.class);
    return ((Parsed.Events) p).events().get(0);
  }

  @Test
  void aRefusedDialIsItsMappedAgentsWithTheDestinationAsTargetAndNoCommand() {
    ViolationEvent e = event("4,377,1257394565,-;" + LOG.formatted(65534, 65534));
    assertThat(e.agentId()).isEqualTo("sandbox-runner-1");
    assertThat(e.commandId()).isNull();
    assertThat(e.commandUnknown()).isTrue();
    assertThat(e.host()).isEqualTo("93.184.215.14");
    assertThat(e.port()).isEqualTo(443);
    assertThat(e.action()).isEqualTo("connect");
    assertThat(e.protocol()).isEqualTo("tcp");
    assertThat(e.sourceAddress()).isEqualTo("10.0.3.7");
    assertThat(e.sourcePort()).isEqualTo(35252);
    assertThat(e.reason()).isEqualTo("agent-egress-deny");
    assertThat(e.subject()).isEqualTo(new ViolationEvent.Subject("netfilter", "uid=65534"));
    assertThat(e.observedAt()).isNull();
    // without a UID the source address names who it was
    ViolationEvent bySource = event("[ 1257.394565] " + LOG.formatted(0, 0).replace(" UID=0 GID=0", "")
        .replace("SRC=10.0.3.7", "SRC=10.0.4.9"));
    assertThat(bySource.agentId()).isEqualTo("build-farm");
    assertThat(bySource.subject().identity()).isEqualTo("src=10.0.4.9");
  }

  @Test
  void eachCarrierSaysWhenAndWhoWroteIt() {
    String log = LOG.formatted(1001, 1001);
    assertThat(event("2026-12-06T04:13:14.553718+00:00 vm kernel: [ 1257.394565] " + log).observedAt())
        .isEqualTo(Instant.parse("2026-12-06T04:13:14.553718Z"));
    assertThat(event("Dec  6 04:13:16 vm kernel: [ 1259.576983] " + log).observedAt())
        .isEqualTo(Instant.parse("2026-12-06T04:13:16Z"));
    assertThat(event("<4>1 2026-12-06T04:13:15.185574+00:00 vm kernel - - - [ 1258.028888] " + log).agentId())
        .isEqualTo("sandbox-runner-2");
    assertThat(event("{\"MESSAGE\":\"" + log + "\",\"_TRANSPORT\":\"kernel\",\"__REALTIME_TIMESTAMP\":\"1796530394869617\"}")
        .observedAt()).isEqualTo(Instant.parse("2026-12-06T04:13:14.869617Z"));
    assertThat(event("kern  :warn  : [ 1259.576983] " + log).agentId()).isEqualTo("sandbox-runner-2");
  }

  @Test
  void theSameTextFromAnotherWriterIsNeverARefusal() {
    String log = LOG.formatted(65534, 65534);
    // user space's writes to /dev/kmsg get a facility of their own: the kernel's is 0
    assertThat(parse("12,400,1,-;" + log)).isEqualTo(Parsed.skipped("not-the-kernel"));
    assertThat(parse("<12>[ 1257.394565] " + log)).isEqualTo(Parsed.skipped("not-the-kernel"));
    assertThat(parse("user  :warn  : [ 1259.576983] " + log)).isEqualTo(Parsed.skipped("not-the-kernel"));
    // another program's syslog line, and one that calls itself kernel but has a process id
    assertThat(parse("Dec  6 04:13:16 vm myapp: " + log)).isEqualTo(Parsed.skipped("not-the-kernel"));
    assertThat(parse("Dec  6 04:13:16 vm kernel[812]: " + log)).isEqualTo(Parsed.skipped("not-the-kernel"));
    assertThat(parse("<12>1 2026-12-06T04:13:15+00:00 vm kernel - - - " + log)).isEqualTo(Parsed.skipped("not-the-kernel"));
    assertThat(parse("{\"MESSAGE\":\"" + log + "\",\"_TRANSPORT\":\"syslog\"}")).isEqualTo(Parsed.skipped("not-the-kernel"));
    // the kernel's own line that quotes what the agent chose (a file name in an audit record): no refusal,
    // whichever skip it reads as
    assertThat(parse("5,401,2,-;audit: type=1400 apparmor=\"DENIED\" name=\"/tmp/" + log + "\" comm=\"touch\""))
        .isInstanceOf(Parsed.Skipped.class);
    // another rule's LOG line (a host firewall's inbound blocks) and a prefix that only starts like a listed one
    assertThat(parse("4,402,3,-;[UFW BLOCK] IN=eth0 OUT= MAC=00:00 SRC=203.0.113.9 DST=10.0.3.7 PROTO=TCP SPT=1 DPT=22 "))
        .isEqualTo(Parsed.skipped("other-rule"));
    assertThat(parse("4,403,4,-;agent-egress-deny-other: IN= OUT=lo SRC=10.0.3.7 DST=1.2.3.4 PROTO=TCP SPT=1 DPT=2 UID=65534 "))
        .isEqualTo(Parsed.skipped("other-rule"));
    // a ulogd record of a prefix not listed, or labelled allowed
    assertThat(parse("{\"oob.prefix\":\"agent-egress-allow: \",\"dest_ip\":\"1.2.3.4\",\"oob.uid\":65534}"))
        .isEqualTo(Parsed.skipped("other-rule"));
    assertThat(parse("{\"oob.prefix\":\"agent-egress-deny: \",\"action\":\"allowed\",\"dest_ip\":\"1.2.3.4\"}"))
        .isEqualTo(Parsed.skipped("allowed"));
  }

  @Test
  void anUnmappedIdentityIsRefusedWithItAndAnIcmpErrorsInnerPacketIsNotTheTarget() {
    Parsed root = parse("4,390,1260812478,-;" + LOG.formatted(0, 0));
    assertThat(root).isInstanceOfSatisfying(Parsed.Rejected.class, r -> {
      assertThat(r.code().code()).isEqualTo("unmapped-identity");
      assertThat(r.identity()).isEqualTo("netfilter uid=0");
    });
    ViolationEvent icmp = event("4,381,1,-;agent-egress-deny: IN=lo OUT= MAC=00:00 SRC=10.0.4.1 DST=10.0.4.2 LEN=58"
        + " PROTO=ICMP TYPE=3 CODE=3 [SRC=10.0.4.2 DST=169.254.169.254 LEN=30 PROTO=UDP SPT=57866 DPT=80 LEN=10 ] ");
    assertThat(icmp.host()).isEqualTo("10.0.4.2");
    assertThat(icmp.port()).isNull();
    assertThat(icmp.action()).isEqualTo("icmp");
  }

  /**
   * Hostile lines of every carrier around the real refusals of two agents: every real refusal is an
   * event of its agent, no hostile line is an event, and no line stops the parser.
   */
  @Test
  void hostileLinesHideNoRefusalAndBecomeNone() {
    Random random = new Random(62);
    Hostile h = new Hostile(62);
    String[] carriers = {"4,%d,1,-;", "[ 12.5] ", "2026-12-06T04:13:14.55+00:00 vm kernel: ", "Dec  6 04:13:16 vm kernel: "};
    String[] forgers = {"12,%d,1,-;", "Dec  6 04:13:16 vm app: ", "Dec  6 04:13:16 vm kernel[9]: ", "5,%d,1,-;audit: name=\""};
    int real = 0;
    for (int i = 0; i < 20_000; i++) {
      int kind = random.nextInt(4);
      if (kind == 0) {
        int uid = random.nextBoolean() ? 65534 : 1001;
        ViolationEvent e = event(carriers[random.nextInt(carriers.length)].formatted(i) + LOG.formatted(uid, uid));
        assertThat(e.agentId()).isEqualTo(uid == 65534 ? "sandbox-runner-1" : "sandbox-runner-2");
        real++;
      } else if (kind == 1) {
        Parsed p = parse(forgers[random.nextInt(forgers.length)].formatted(i) + LOG.formatted(65534, 65534) + h.text());
        assertThat(p).isInstanceOf(Parsed.Skipped.class);
      } else {
        String line = carriers[random.nextInt(carriers.length)].formatted(i) + (random.nextBoolean()
            ? "agent-egress-deny: " + h.text() : h.text());
        Parsed p = parse(line);
        if (p instanceof Parsed.Events ev) {
          // a listed prefix then IN=: the kernel wrote it; whatever follows is read as fields, never as text
          assertThat(ev.events()).allSatisfy(e -> assertThat(e.host()).matches("[0-9a-f.:]+"));
        }
      }
    }
    assertThat(real).isGreaterThan(4_000);
  }
}
