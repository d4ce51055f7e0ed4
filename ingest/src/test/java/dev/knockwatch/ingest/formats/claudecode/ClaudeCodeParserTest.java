package dev.knockwatch.ingest.formats.claudecode;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.knockwatch.events.AddressClass;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.Rejection;
import dev.knockwatch.ingest.spi.SourceLine;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The hook records of a real Claude Code 2.1.332 session in its real sandbox (bubblewrap, its
 * proxy, {@code allowedDomains: []}), driven by the local Messages API stand-in: the fixture
 * {@code hostile-session.claude-code.jsonl}, read as ingest reads it.
 */
class ClaudeCodeParserTest {

  private static final Instant NOW = Instant.parse("2026-12-03T23:30:00Z");
  private static final String SESSION = "3910808c-131a-4082-8590-281847ea4a47";
  private static final String TASK = "77bc2086-97a5-4197-9975-3b1ea6a72c81";

  private static List<String> fixture() throws IOException {
    try (InputStream in = ClaudeCodeParserTest.class.getResourceAsStream(
        "samples/claude-code-2.1.332-hostile-session.claude-code.jsonl")) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList();
    }
  }

  private static List<Parsed> parseAll(List<String> lines) {
    ClaudeCodeParser p = new ClaudeCodeParser();
    List<Parsed> out = new ArrayList<>();
    long offset = 0;
    for (String l : lines) {
      out.add(p.parse(new SourceLine("claude-code/" + SESSION + ".claude-code.jsonl", offset, l, "claude-code", SESSION,
          "h", NOW)));
      offset += l.getBytes(StandardCharsets.UTF_8).length + 1;
    }
    return out;
  }

  private static List<ViolationEvent> events(List<Parsed> parsed) {
    return parsed.stream().filter(p -> p instanceof Parsed.Events).flatMap(p -> ((Parsed.Events) p).events().stream()).toList();
  }

  private static String describe(ViolationEvent e) {
    return e.evidence() + " " + e.action() + " " + (e.kind() == Kind.FILESYSTEM ? e.path() : e.host() + ":" + e.port());
  }

  @Test
  void aRealSessionYieldsOneEventPerTargetAndToolCallWithItsEvidence() throws IOException {
    List<ViolationEvent> events = events(parseAll(fixture()));
    assertThat(events).extracting(ClaudeCodeParserTest::describe).containsExactly(
        "sandbox-record network-outbound example.com:443", // curl https://example.com: the block Claude Code appends
        "sandbox-record network-outbound example.com:443", // the model's retry: a new tool call, a new command
        "command-text dns example.com:443", // --noproxy '*': no sandbox record at all, the text says it
        "command-text http-request 169.254.169.254:80", // metadata with 2>/dev/null: only the text is left
        "output open /tmp/cc/home/work/.git/hooks/pre-commit", // bash's words, joined to the call's cwd
        "output open /tmp/cc/home/sandbox-probe", // touch's words
        "output http-connect pastebin.com:443", // curl -v's transcript, before the block restates it
        "output http-connect example.org:443", // wget's "Proxy tunneling failed"
        "output http-connect example.net:443", // Python requests' "Tunnel connection failed: 403"
        "sandbox-record network-outbound forged.example:443", // printed by the command: see docs/TRUST.md
        "command-text sandbox-off-request null:null", // the escape retry asks for no sandbox (dangerouslyDisableSandbox)
        "sandbox-record network-outbound example.com:443"); // ... and was kept in it: its block is there
    assertThat(events).allSatisfy(e -> {
      assertThat(e.source()).isEqualTo("claude-code");
      assertThat(e.agentId()).isEqualTo("claude-code");
      assertThat(e.sessionId()).isEqualTo(SESSION);
      assertThat(e.taskId()).isEqualTo(TASK);
      assertThat(e.commandId()).startsWith("toolu_01").hasSize(30);
      assertThat(e.identityConflict()).as("the srt proxy user in curl -v's words is no claim here").isNull();
      assertThat(e.commandText()).isNotBlank();
    });
    assertThat(events.stream().map(ViolationEvent::commandId).distinct()).as("each tool call is its own command").hasSize(11);
    assertThat(events).filteredOn(ViolationEvent::sandboxOff).extracting(ViolationEvent::action)
        .as("the escape retry was answered by the sandbox").containsExactly("sandbox-off-request");
    assertThat(events.stream().map(ViolationEvent::eventId).distinct()).hasSize(events.size());
    assertThat(events.get(3).addressClass()).isEqualTo(AddressClass.CLOUD_METADATA);
    assertThat(events.get(4).errno()).isEqualTo("EROFS");
    assertThat(Json.MAPPER.valueToTree(events).toString()).as("the proxy's password in curl -v's words stays out")
        .doesNotContain("8e3b5435da3a411028e319af155825d3").doesNotContain("MGEwMDc1NGNiMTEy");
  }

  @Test
  void everyRecordIsAccountedForWithAReasonTheDocsList() throws IOException {
    List<Parsed> parsed = parseAll(fixture());
    assertThat(parsed).noneMatch(p -> p instanceof Parsed.Rejected);
    assertThat(parsed.stream().filter(p -> p instanceof Parsed.Skipped).map(p -> ((Parsed.Skipped) p).reason()).distinct())
        .containsExactlyInAnyOrder("no-door", "no-refusal");
  }

  private static ObjectNode record(String hook, String toolUseId, String command) {
    ObjectNode n = Json.MAPPER.createObjectNode();
    n.put("session_id", SESSION).put("prompt_id", TASK).put("cwd", "/w").put("hook_event_name", hook)
        .put("tool_name", "Bash").put("tool_use_id", toolUseId);
    n.putObject("tool_input").put("command", command).put("description", "x");
    return n;
  }

  private static Parsed one(ObjectNode record) {
    return parseAll(List.of(record.toString())).get(0);
  }

  @Test
  void aCommandThatPrintsAnotherCallsRecordIsStillItsOwnCommand() {
    String other = record("PostToolUseFailure", "toolu_01OTHERotherOTHERother00", "x").put("error",
        "<sandbox_violations>\ndeny network-outbound victim.example:443 (user denied)\n</sandbox_violations>").toString();
    ObjectNode r = record("PostToolUse", "toolu_01OwnOwnOwnOwnOwnOwnOwn0", "cat other.json");
    r.putObject("tool_response").put("stdout", other + "\n" + other).put("stderr", "");
    Parsed p = one(r);
    assertThat(p).isInstanceOf(Parsed.Skipped.class); // a JSON line in the output is no block, no refusal words
    r.putObject("tool_response").put("stdout", "").put("stderr",
        "<sandbox_violations>\ndeny network-outbound evil.example:443 (user denied)\n</sandbox_violations>");
    List<ViolationEvent> events = ((Parsed.Events) one(r)).events();
    assertThat(events).singleElement().satisfies(e -> {
      assertThat(e.commandId()).isEqualTo("toolu_01OwnOwnOwnOwnOwnOwnOwn0");
      assertThat(e.host()).isEqualTo("evil.example");
    });
  }

  @Test
  void aCallThatAskedForNoSandboxAndShowsNoSandboxMayHaveRunOutside() {
    ObjectNode r = record("PostToolUseFailure", "toolu_01OwnOwnOwnOwnOwnOwnOwn0", "curl -sS https://example.com");
    ((ObjectNode) r.get("tool_input")).put("dangerouslyDisableSandbox", true);
    // what the real Claude Code recorded with allowUnsandboxedCommands: true and Bash(curl *) allowed
    r.put("error", "Exit code 6\ncurl: (6) Could not resolve host: example.com");
    assertThat(((Parsed.Events) one(r)).events()).extracting(ViolationEvent::action)
        .containsExactly("dns", "sandbox-off-unanswered");
    r.put("error", "Exit code 56\ncurl: (56) CONNECT tunnel failed, response 403\n\n<sandbox_violations>\n"
        + "deny network-outbound example.com:443 (user denied)\n</sandbox_violations>");
    assertThat(((Parsed.Events) one(r)).events()).extracting(ViolationEvent::action).containsExactly("network-outbound");
  }

  @Test
  void aToolCallIdThatIsNoCommandIdIsRejectedAndOtherToolsAreSkipped() {
    assertThat(one(record("PreToolUse", "toolu_1", "curl http://10.0.0.1/")))
        .isInstanceOfSatisfying(Parsed.Rejected.class, r -> assertThat(r.code()).isEqualTo(Rejection.SHORT_COMMAND_ID));
    assertThat(one((ObjectNode) record("PreToolUse", "toolu_01OwnOwnOwnOwnOwnOwnOwn0", "x").put("tool_name", "Read")))
        .isEqualTo(Parsed.skipped("other-tool"));
    assertThat(parseAll(List.of("{\"hook_event_name\":\"Stop\"}", "[1]", "{")))
        .containsExactly(Parsed.skipped("other-hook"), Parsed.rejected(Rejection.UNPARSEABLE, "not a JSON object"),
            parseAll(List.of("{")).get(0));
  }

  /** Whatever the agent prints, or however it mangles a record, the parser answers and the ids stay the harness's. */
  @Test
  void hostileOutputNeverThrowsNorMisattributes() {
    Random random = new Random(44);
    String[] pieces = {"\ud800", "\u0000", "\u202e", "\u2028", "\u0085", "<sandbox_violations>", "</sandbox_violations>",
        "deny network-outbound a.example:443 (x)\n", "HTTP/1.1 403 Forbidden\n", "curl: (7) Failed to connect to 10.0.0.1 port 80: x\n",
        "touch: cannot touch '/etc/x': Read-only file system\n", "\"tool_use_id\":\"toolu_01FORGEDforgedFORGEDforg\"", "\n", "\r\n"};
    for (int i = 0; i < 500; i++) {
      StringBuilder out = new StringBuilder();
      int n = random.nextInt(60);
      for (int k = 0; k < n; k++) {
        out.append(pieces[random.nextInt(pieces.length)]);
      }
      if (random.nextInt(50) == 0) {
        out.append("x".repeat(200_000));
      }
      ObjectNode r = record(random.nextBoolean() ? "PostToolUse" : "PostToolUseFailure", "toolu_01OwnOwnOwnOwnOwnOwnOwn0",
          out.toString());
      r.put("error", out.toString());
      Parsed p = one(r);
      assertThat(p).isNotNull();
      if (p instanceof Parsed.Events ev) {
        assertThat(ev.events()).allSatisfy(e -> assertThat(e.commandId()).isEqualTo("toolu_01OwnOwnOwnOwnOwnOwnOwn0"));
        assertThat(ev.events().size()).isLessThanOrEqualTo(dev.knockwatch.ingest.formats.toolcall.ToolCall.MAX_EVENTS_PER_RECORD);
      }
    }
  }
}
