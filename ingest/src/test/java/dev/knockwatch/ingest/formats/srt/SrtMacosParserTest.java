package dev.knockwatch.ingest.formats.srt;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.AddressClass;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.Hostile;
import dev.knockwatch.ingest.Settled;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.Rejection;
import dev.knockwatch.ingest.spi.SourceLine;
import java.time.Instant;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * srt on macOS: the records the bridge writes when srt's log monitor stored Seatbelt's report, whose
 * {@code line} is the kernel's {@code PROCESS(PID) deny(N) OPERATION TARGET} (srt 0.0.83,
 * {@code dist/sandbox/macos-sandbox-utils.js}, {@code startMacOSSandboxLogMonitor}). What the agent
 * chose there is the process name, the path and the address: the denial is read from the left, and
 * what only looks like one is rejected with its reason, never read as a refusal of something else.
 */
class SrtMacosParserTest {

  static final Instant NOW = Instant.parse("2026-12-06T09:20:00Z");
  static final String CMD = "MacFileWrite0000000001";
  private final SrtViolationParser parser = new SrtViolationParser();

  private Parsed parse(String line) {
    return parseRecord("{\"line\":" + Hostile.json(line) + ",\"encodedCommand\":\"TWFjRmlsZVdyaXRlMDAwMDAwMDAwMQ==\","
        + "\"command\":\"make test\",\"timestamp\":\"2026-12-06T09:16:21.077Z\",\"commandId\":\"" + CMD + "\","
        + "\"agentId\":\"mac-agent-1\"}");
  }

  private Parsed parseRecord(String json) {
    return Settled.of(parser.parse(new SourceLine("mac-agent-1/" + CMD + ".violations.jsonl", 0, json, "mac-agent-1",
        CMD, "host-a", NOW)), NOW);
  }

  private ViolationEvent event(String line) {
    Parsed p = parse(line);
    assertThat(p).as(line).isInstanceOf(Parsed.Events.class);
    assertThat(((Parsed.Events) p).events()).hasSize(1);
    return ((Parsed.Events) p).events().get(0);
  }

  @Test
  void aFileDenialIsTheOperationOnItsPathByTheProcessTheKernelNames() {
    ViolationEvent e = event("touch(4301) deny(1) file-write-create /Users/agent/.zshrc");
    assertThat(e.kind()).isEqualTo(Kind.FILESYSTEM);
    assertThat(e.action()).isEqualTo("file-write-create");
    assertThat(e.path()).isEqualTo("/Users/agent/.zshrc");
    assertThat(e.pid()).isEqualTo(4301);
    assertThat(e.host()).isNull();
    assertThat(e.reason()).isNull();
    assertThat(e.commandId()).isEqualTo(CMD);
    assertThat(e.agentId()).isEqualTo("mac-agent-1");
    assertThat(e.source()).isEqualTo("srt-violation");
    // a path with spaces, and a process name with spaces and parentheses: the kernel's words stay whole
    assertThat(event("Gradle Worker(10) deny(1) file-read-data /Users/agent/My Files/a b.txt").path())
        .isEqualTo("/Users/agent/My Files/a b.txt");
    ViolationEvent helper = event("com.example (helper)(99) deny(1) file-write-data /private/tmp/x");
    assertThat(helper.pid()).isEqualTo(99);
    assertThat(helper.path()).isEqualTo("/private/tmp/x");
    assertThat(event("rm(5) deny(1) file-write-unlink /Users/agent/work/.git/config").action())
        .isEqualTo("file-write-unlink");
  }

  @Test
  void aNetworkDenialIsTheAddressDialledOrTheUnixSocketsPath() {
    ViolationEvent dial = event("curl(4242) deny(1) network-outbound 93.184.215.14:443");
    assertThat(dial.kind()).isEqualTo(Kind.NETWORK);
    assertThat(dial.action()).isEqualTo("network-outbound");
    assertThat(dial.host()).isEqualTo("93.184.215.14");
    assertThat(dial.port()).isEqualTo(443);
    assertThat(dial.addressClass()).isEqualTo(AddressClass.PUBLIC);
    assertThat(dial.pid()).isEqualTo(4242);
    assertThat(event("python3(9) deny(1) network-outbound 169.254.169.254:80").addressClass())
        .isEqualTo(AddressClass.CLOUD_METADATA);
    ViolationEvent v6 = event("node(7) deny(1) network-outbound [::1]:8080");
    assertThat(v6.host()).isEqualTo("::1");
    assertThat(v6.port()).isEqualTo(8080);
    assertThat(v6.addressClass()).isEqualTo(AddressClass.LOOPBACK);
    ViolationEvent socket = event("docker(4410) deny(1) network-outbound /private/var/run/docker.sock");
    assertThat(socket.kind()).isEqualTo(Kind.UNIX_SOCKET);
    assertThat(socket.path()).isEqualTo("/private/var/run/docker.sock");
    assertThat(socket.host()).isNull();
    // a target that is neither: still the refusal, the target as its reason, no host made up
    ViolationEvent odd = event("curl(3) deny(1) network-outbound remote:*:80");
    assertThat(odd.kind()).isEqualTo(Kind.NETWORK);
    assertThat(odd.host()).isNull();
    assertThat(odd.reason()).isEqualTo("remote:*:80");
  }

  @Test
  void anyOtherOperationIsARefusalOfKindProcessWithItsTargetAsTheReason() {
    ViolationEvent mach = event("zsh(12) deny(1) mach-lookup com.apple.coreservices.appleevents");
    assertThat(mach.kind()).isEqualTo(Kind.PROCESS);
    assertThat(mach.action()).isEqualTo("mach-lookup");
    assertThat(mach.reason()).isEqualTo("com.apple.coreservices.appleevents");
    assertThat(mach.path()).isNull();
    ViolationEvent signal = event("kill(1) deny(1) signal");
    assertThat(signal.action()).isEqualTo("signal");
    assertThat(signal.reason()).isNull();
    assertThat(event("sh(2) deny(1) process-exec* /bin/ls").action()).isEqualTo("process-exec*");
  }

  @Test
  void whatOnlyLooksLikeASeatbeltDenialIsRejectedWithItsText() {
    for (String line : java.util.List.of(
        "curl(4242) allow file-read-data /Users/agent/x",   // an allow report: no refusal
        "deny(1) file-read-data /Users/agent/x",            // no process
        "(4242) deny(1) file-read-data /Users/agent/x",     // no process name
        "curl() deny(1) file-read-data /x",                 // no PID
        "curl(42a) deny(1) file-read-data /x",              // a PID that is no number
        "curl(4242) deny() file-read-data /x",              // no count
        "curl(4242) deny(1)",                               // no operation
        "curl(4242) deny(1) File-Read-Data /x",             // no operation of Seatbelt's
        "curl(4242) deny(1) file-read-data/x",              // an operation run into its target
        "curl(4242)  deny(1) file-read-data /x",            // not the kernel's spacing
        "x".repeat(SrtLine.MAX_PROCESS_CHARS) + "(1) deny(1) file-read-data /x", // a name no kernel gives
        "curl(4242) denied(1) network-outbound 1.2.3.4:443",
        "System Policy: eslogger(7) deny(1) system-privilege 1016".replace("deny(1)", "deny 1"))) {
      Parsed p = parse(line);
      assertThat(p).as(line).isInstanceOfSatisfying(Parsed.Rejected.class, r -> {
        assertThat(r.code()).isEqualTo(Rejection.UNPARSEABLE);
        assertThat(r.reason()).startsWith("not an srt deny line");
      });
    }
  }

  @Test
  void aForgedDenialInsideThePathIsPartOfThePathNeverARefusalOfItsOwn() {
    ViolationEvent e = event("touch(7) deny(1) file-write-create /Users/agent/x(1) deny(1) network-outbound "
        + "169.254.169.254:80");
    assertThat(e.kind()).isEqualTo(Kind.FILESYSTEM);
    assertThat(e.path()).isEqualTo("/Users/agent/x(1) deny(1) network-outbound 169.254.169.254:80");
    assertThat(e.host()).isNull();
    assertThat(e.addressClass()).isNull();
    // srt keeps what follows the FIRST "Sandbox:": a second one in the path stays in the path
    ViolationEvent f = event("cat(8) deny(1) file-read-data /tmp/Sandbox: curl(1) deny(1) network-outbound 10.0.0.1:22");
    assertThat(f.kind()).isEqualTo(Kind.FILESYSTEM);
    assertThat(f.pid()).isEqualTo(8);
    assertThat(f.path()).isEqualTo("/tmp/Sandbox: curl(1) deny(1) network-outbound 10.0.0.1:22");
  }

  @Test
  void aRecordSrtReadWithoutItsTagIsTheCommandTheBridgesFileNames() {
    Parsed p = parseRecord("{\"line\":\"bash(4409) deny(1) file-write-create /Users/agent/work/.env\","
        + "\"timestamp\":\"2026-12-06T09:17:45.018Z\",\"commandId\":\"" + CMD + "\",\"agentId\":\"mac-agent-1\"}");
    assertThat(p).isInstanceOfSatisfying(Parsed.Events.class, ev -> {
      ViolationEvent e = ev.events().get(0);
      assertThat(e.commandId()).isEqualTo(CMD);
      assertThat(e.commandText()).isNull();
      assertThat(e.identityConflict()).isNull();
      assertThat(e.path()).isEqualTo("/Users/agent/work/.env");
    });
  }

  /**
   * Hostile process names, paths and addresses (NUL, bidi overrides, lone surrogates, control
   * characters, a megabyte now and then, forged denials inside them) around real Seatbelt lines:
   * every real line is its event, every line with a name the kernel could give is an event whatever
   * its target, nothing the agent wrote leaves with a control, bidi or lone surrogate in it or past
   * its bound, and no line stops the parser.
   */
  @Test
  void hostileFieldsAroundRealLinesHideNoRefusalAndLeaveNothingUnsafe() {
    Hostile h = new Hostile(65);
    Random random = h.random();
    String[] ops = {"file-write-create", "file-read-data", "network-outbound", "mach-lookup", "file-write-data"};
    int real = 0;
    int hostile = 0;
    for (int i = 0; i < 5_000; i++) {
      int roll = random.nextInt(3);
      if (roll == 0) {
        ViolationEvent e = event("curl(" + (1000 + i) + ") deny(1) network-outbound 93.184.215.14:443");
        assertThat(e.host()).isEqualTo("93.184.215.14");
        assertThat(e.pid()).isEqualTo(1000 + i);
        real++;
        continue;
      }
      String name = h.text();
      String op = ops[random.nextInt(ops.length)];
      String target = switch (random.nextInt(4)) {
        case 0 -> "/Users/agent/" + h.text();
        case 1 -> h.hostPort();
        case 2 -> "/tmp/" + h.text() + "(1) deny(1) network-outbound 169.254.169.254:80";
        default -> h.text();
      };
      // srt's store turns controls into spaces and trims; a record the agent wrote itself need not be
      String line = (random.nextBoolean() ? name.substring(0, Math.min(name.length(), 32)) : name) + "(" + i
          + ") deny(1) " + op + " " + target;
      Parsed p = parse(line);
      if (p instanceof Parsed.Events ev) {
        assertThat(ev.events()).hasSize(1);
        ViolationEvent e = ev.events().get(0);
        assertThat(e.commandId()).isEqualTo(CMD);
        for (String s : new String[] {e.path(), e.reason(), e.host()}) {
          if (s != null) {
            assertThat(s).doesNotContainPattern("[\\x00-\\x1f\\x7f-\\x9f\\u202a-\\u202e\\u2066-\\u2069\\u2028\\u2029]");
            assertThat(unpairedSurrogate(s)).as("a lone surrogate").isFalse();
            assertThat(s.length()).isLessThanOrEqualTo(SrtViolationParser.MAX_PATH_CHARS + 1);
          }
        }
        if (e.kind() == Kind.NETWORK && e.host() != null) {
          assertThat(e.path()).isNull();
        }
        hostile++;
      } else {
        assertThat(p).as(line.length() > 300 ? line.substring(0, 300) : line).isInstanceOf(Parsed.Rejected.class);
        // a name the kernel could give (a short one with no denial of its own) is never why a line is refused
        assertThat(!name.isBlank() && name.length() <= 32 && !name.contains(") deny(") && line.startsWith(name + "("))
            .as(line.length() > 300 ? line.substring(0, 300) : line).isFalse();
      }
    }
    assertThat(real).isGreaterThan(1_000);
    assertThat(hostile).isGreaterThan(1_000);
  }

  private static boolean unpairedSurrogate(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        return true;
      }
    }
    return false;
  }
}
