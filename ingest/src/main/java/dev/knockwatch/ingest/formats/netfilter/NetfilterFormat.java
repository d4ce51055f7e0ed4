package dev.knockwatch.ingest.formats.netfilter;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.events.config.Key;
import dev.knockwatch.ingest.spi.FileOptions;
import dev.knockwatch.ingest.spi.Identities;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.WallFormat;
import java.util.List;
import java.util.Set;

/**
 * The host firewall's refusals: the kernel's LOG target (nftables {@code log prefix "…" flags
 * skuid}, iptables {@code -j LOG --log-uid}) as /dev/kmsg, dmesg, journald or syslog carry it, and
 * ulogd2's JSON records of NFLOG ({@code log group N}). A packet names no command: the source's
 * {@code agents} map what the kernel knows of it to an agent.
 */
public final class NetfilterFormat implements WallFormat {

  public static final String NAME = "netfilter";

  static final Key<List<String>> PREFIXES = Key.strings("prefixes", "list of LOG prefixes", null, "required",
      "the prefixes of the ruleset's refusing rules as the rules write them (`log prefix \"agent-egress-deny: \"`):"
          + " only a kernel line that starts with one is read")
      .requiredAs("is missing: the LOG prefixes of the ruleset's refusing rules (log prefix \"…\")");
  static final Key<Identities> AGENTS = Identities.key(List.of("uid", "gid", "source", "prefix", "in", "out", "host"),
      Set.of("source"));

  @Override
  public String wireName() {
    return NAME;
  }

  @Override
  public String summary() {
    return "the host firewall's refusals: the kernel's LOG lines (nftables `log prefix \"…\" flags skuid`, iptables"
        + " `-j LOG --log-uid`) as `/dev/kmsg`, `dmesg` (plain, `-r`, `-x`, `--time-format=iso`), journald (`journalctl"
        + " -k`, its JSON too) or syslog (rsyslog's imklog) carry them, and ulogd2's JSON records of NFLOG (`log group N`)."
        + " Only the kernel's lines that start with one of the source's `prefixes` are read; a packet names no command,"
        + " so the source's `agents` map its UID, source address, prefix, interface or logging host to an agent";
  }

  @Override
  public List<Key<?>> keys() {
    return List.of(PREFIXES, AGENTS);
  }

  @Override
  public LineParser parser(FileOptions options) {
    List<String> prefixes = options.get(PREFIXES);
    return new NetfilterParser(prefixes == null ? List.of() : prefixes, WallFormat.agents(options, AGENTS));
  }

  @Override
  public List<Skip> skips() {
    return List.of(
        new Skip("not-the-kernel", "a line its carrier says another writer wrote (a `/dev/kmsg` or RFC 5424 record of a"
            + " facility but the kernel's, a syslog line whose tag is not `kernel`, journald's of another transport):"
            + " never read as the kernel's, whatever it holds"),
        new Skip("other-message", "a kernel message that is no LOG line: another subsystem's, or `/dev/kmsg`'s metadata"
            + " line of a record"),
        new Skip("other-rule", "a LOG line (or ulogd2 record) whose prefix is none of the source's: another rule's, such"
            + " as a host firewall's inbound blocks"),
        new Skip("allowed", "a ulogd2 record its output labels `allowed` (`boolean_label`: the group of a rule that"
            + " accepts)"));
  }

  @Override
  public String yields() {
    return "each packet a listed rule logged, the kernel's line or ulogd2's record: `commandUnknown`, the agent the"
        + " source maps it to, the destination as `host`/`port`, the source as `sourceAddress`/`sourcePort`, the"
        + " `protocol` (a TCP packet's action `connect`, UDP's `sendto`), the rule's prefix as `reason`, and who the wall"
        + " refused as `subject` (`uid=N`, else `src=ADDRESS`); a packet no entry maps is rejected (`unmapped-identity`)";
  }

  @Override
  public Trust trust() {
    return new Trust("the kernel (its LOG target, through `/dev/kmsg`, journald or rsyslog's imklog) or ulogd2 (NFLOG),"
        + " outside the sandbox; the prefix is the ruleset's",
        "who: the agent the source's `agents` map the packet's UID (the host's, whatever user namespace the process"
        + " is in), source address, prefix, interface or logging host to; the command is unknown. Only lines the"
        + " kernel wrote (a kmsg or RFC 5424 facility 0, journald's kernel transport, the syslog tag `kernel`) that start"
        + " with a listed prefix; plain `dmesg` cannot tell the kernel's lines from a root process's writes to"
        + " `/dev/kmsg`",
        "the packet: its destination address and ports (the target) and its source port; no text. Text of another"
        + " writer that holds `IN=… SRC=…` (a file name an audit line quotes, a program's message) is never read:"
        + " the message must start with a listed prefix");
  }

  /** The rule as OCSF's firewall rule, and the refused process's user where the kernel named its UID. */
  @Override
  public void ocsf(ViolationEvent e, ObjectNode record) {
    if (e.reason() != null) {
      record.putObject("firewall_rule").put("name", e.reason()).put("type", "netfilter");
    }
    String uid = uid(e);
    if (uid != null && record.get("actor") instanceof ObjectNode actor) {
      actor.putObject("user").put("uid", uid);
    }
  }

  @Override
  public void ecs(ViolationEvent e, ObjectNode document) {
    if (e.reason() != null) {
      document.putObject("rule").put("name", e.reason());
    }
    String uid = uid(e);
    if (uid != null) {
      document.putObject("user").put("id", uid);
    }
  }

  private static String uid(ViolationEvent e) {
    String id = e.subject() == null ? null : e.subject().identity();
    return id != null && id.startsWith("uid=") && id.substring(4).matches("[0-9]{1,10}") ? id.substring(4) : null;
  }
}
