package dev.knockwatch.ingest.formats.netfilter;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.HostClassifier;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.spi.Attribution;
import dev.knockwatch.ingest.spi.Identities;
import dev.knockwatch.ingest.spi.JsonLine;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.Rejection;
import dev.knockwatch.ingest.spi.SourceLine;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One line of a netfilter source: a kernel LOG line as one of its carriers wrote it
 * ({@link KernelMessage}), or a JSON record of ulogd2 (NFLOG) or of journald. Only the kernel's
 * own lines are read (a carrier that says another writer wrote the line is skipped), and of them
 * only those that start with one of the source's prefixes: text that holds {@code IN=… SRC=…}
 * anywhere else (another subsystem quoting a file name, another program's message) is never a
 * refusal. Who was refused is what the source's {@code agents} map the packet's UID, source
 * address, prefix, interfaces or logging host to; the command is unknown.
 */
final class NetfilterParser implements LineParser {

  private final List<String> prefixes;
  private final Identities agents;

  NetfilterParser(List<String> prefixes, Identities agents) {
    this.prefixes = prefixes;
    this.agents = agents;
  }

  /** Its prefixes and mapping are fixed, and each line is read alone. */
  @Override
  public boolean linesStandAlone() {
    return true;
  }

  @Override
  public Parsed parse(SourceLine src) {
    String text = src.text();
    if (text.startsWith(" ")) {
      return Parsed.skipped("other-message"); // /dev/kmsg's metadata of the record before it
    }
    if (text.startsWith("{")) {
      return json(src, text);
    }
    KernelMessage m = KernelMessage.of(text, src.ingestedAt());
    return packet(src, m != null ? m : new KernelMessage(text, null, null, null));
  }

  private Parsed packet(SourceLine src, KernelMessage m) {
    if (Boolean.FALSE.equals(m.fromKernel())) {
      return Parsed.skipped("not-the-kernel");
    }
    LogLine l = LogLine.of(m.text(), prefixes);
    if (l == null) {
      return Parsed.skipped(LogLine.looksLikeOne(m.text()) ? "other-rule" : "other-message");
    }
    Map<String, String> f = l.fields();
    return refusal(src, l.prefix(), protocol(f.get("PROTO")), f.get("SRC"), f.get("SPT"), f.get("DST"), f.get("DPT"),
        f.get("UID"), f.get("GID"), f.get("IN"), f.get("OUT"), m.at(), m.host());
  }

  private Parsed json(SourceLine src, String text) {
    JsonLine line = JsonLine.read(text);
    if (line.object() == null) {
      return line.rejected();
    }
    JsonNode root = line.object();
    if (root.has("oob.prefix")) {
      return ulogd(src, root);
    }
    KernelMessage m = KernelMessage.ofJournal(root);
    if (m == null) {
      return Parsed.rejected(Rejection.UNPARSEABLE, "a JSON object that is neither ulogd2's record (oob.prefix) nor"
          + " journald's (MESSAGE)");
    }
    return packet(src, m);
  }

  /** A record of ulogd2's JSON output (ulogd_output_JSON.c, 2.0.8): the kernel's packet as NFLOG gave it. */
  private Parsed ulogd(SourceLine src, JsonNode r) {
    String prefix = listed(string(r, "oob.prefix"));
    if (prefix == null) {
      return Parsed.skipped("other-rule");
    }
    if ("allowed".equals(string(r, "action"))) {
      return Parsed.skipped("allowed"); // boolean_label: the group of a rule that accepts
    }
    Instant at = null;
    JsonNode sec = r.get("oob.time.sec");
    if (sec != null && sec.canConvertToLong()) {
      JsonNode usec = r.get("oob.time.usec");
      long micros = usec != null && usec.canConvertToLong() ? Math.floorMod(usec.asLong(), 1_000_000L) : 0;
      at = sec.asLong() < 0 || sec.asLong() > 253_402_300_799L ? SourceLine.UNREADABLE_TIME
          : Instant.ofEpochSecond(sec.asLong(), micros * 1_000);
    }
    return refusal(src, prefix, protocol(string(r, "ip.protocol")), string(r, "src_ip"), string(r, "src_port"),
        string(r, "dest_ip"), string(r, "dest_port"), string(r, "oob.uid"), string(r, "oob.gid"), string(r, "oob.in"),
        string(r, "oob.out"), at, null);
  }

  /** The listed prefix {@code p} is, trailing spaces aside; null when none. */
  private String listed(String p) {
    if (p == null) {
      return null;
    }
    for (String l : prefixes) {
      if (l.stripTrailing().equals(p.stripTrailing())) {
        return l;
      }
    }
    return null;
  }

  private Parsed refusal(SourceLine src, String prefix, String protocol, String srcAddress, String srcPort,
      String dst, String dstPort, String uid, String gid, String in, String out, Instant at, String host) {
    String target = address(dst);
    if (target == null) {
      return Parsed.rejected(Rejection.UNPARSEABLE, "a LOG line of prefix \"" + Sanitize.text(prefix, 128)
          + "\" with no destination address (DST)");
    }
    String source = address(srcAddress);
    String u = digits(uid);
    Map<String, String> knows = new LinkedHashMap<>();
    put(knows, "uid", u);
    put(knows, "gid", digits(gid));
    put(knows, "source", source);
    knows.put("prefix", prefix);
    put(knows, "in", word(in));
    put(knows, "out", word(out));
    put(knows, "host", word(host));
    String identity = u != null ? "uid=" + u : source != null ? "src=" + source : "prefix=" + prefix.strip();
    Attribution.Result who = Attribution.ofWall(NetfilterFormat.NAME, identity, knows, agents);
    if (who instanceof Attribution.Refused r) {
      return new Parsed.Rejected(r.code(), r.reason(), at, r.identity());
    }
    String agent = ((Attribution.Attributed) who).agentId();
    ViolationEvent.Builder b = src.newEvent().agentId(agent).commandUnknown(true).source(NetfilterFormat.NAME)
        .kind(Kind.NETWORK).action(action(protocol)).protocol(protocol)
        .host(target).port(port(dstPort)).addressClass(HostClassifier.classify(target).orElse(null))
        .sourceAddress(source).sourcePort(port(srcPort))
        .reason(rule(prefix))
        .subject(new ViolationEvent.Subject(NetfilterFormat.NAME, identity))
        .observedAt(at);
    return Parsed.of(b.build());
  }

  /** The rule's words: its prefix without the separator its LOG text ends with. */
  static String rule(String prefix) {
    String r = prefix.strip();
    return r.endsWith(":") ? r.substring(0, r.length() - 1).strip() : r;
  }

  private static String action(String protocol) {
    if (protocol == null) {
      return "packet";
    }
    return switch (protocol) {
      case "tcp" -> "connect";
      case "udp", "udplite" -> "sendto";
      case "icmp", "icmpv6" -> "icmp";
      default -> "packet";
    };
  }

  /** {@code PROTO=TCP} or ulogd2's {@code ip.protocol} 6, as a lower-case name; a number the kernel did not name as itself. */
  private static String protocol(String p) {
    if (p == null) {
      return null;
    }
    return switch (p) {
      case "TCP", "6" -> "tcp";
      case "UDP", "17" -> "udp";
      case "UDPLITE", "136" -> "udplite";
      case "ICMP", "1" -> "icmp";
      case "ICMPv6", "58" -> "icmpv6";
      default -> p.matches("[0-9]{1,3}") ? p : p.matches("[A-Za-z0-9]{1,16}") ? p.toLowerCase(Locale.ROOT) : null;
    };
  }

  /** An IP literal, canonical; null for anything else (the kernel writes only addresses). */
  private static String address(String a) {
    if (a == null || a.isEmpty() || a.length() > 45) {
      return null;
    }
    String c = HostClassifier.canonical(a);
    return HostClassifier.isIpLiteral(c) ? c : null;
  }

  private static Integer port(String p) {
    String d = digits(p);
    return d == null || d.length() > 5 || Integer.parseInt(d) > 65_535 ? null : Integer.parseInt(d);
  }

  private static String digits(String s) {
    return s != null && s.matches("[0-9]{1,10}") ? s : null;
  }

  /** An interface's or host's name as the kernel or carrier wrote it; null when empty or unlike one. */
  private static String word(String s) {
    return s != null && s.matches("[A-Za-z0-9._@:-]{1,64}") ? s : null;
  }

  private static String string(JsonNode r, String key) {
    JsonNode v = r.get(key);
    return v == null || v.isNull() || v.isContainerNode() ? null : v.asText();
  }

  private static void put(Map<String, String> m, String k, String v) {
    if (v != null) {
      m.put(k, v);
    }
  }
}
