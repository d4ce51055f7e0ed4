package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.testkit.HttpRecorder;
import dev.knockwatch.testkit.HttpRecorder.Answer;
import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code query} against a local server playing the query API. */
class QueryCommandTest {

  static final String ID = "QueryQueryQueryQuery01";
  static final String TIMELINE = """
      {"commandId":"QueryQueryQueryQuery01","agentId":"ci-runner-1","role":"ci","firstSeen":"2026-11-30T02:00:00Z",
       "lastSeen":"2026-11-30T02:00:05Z","events":3,"targets":{"evil.example:443":2,"x.example:80":1},
       "reasons":{"host is not on the allow list":3},"sources":{"srt-violation":3},
       "alerts":{"a53d44ed59dc6a19":{"rule":"off-role-host","severity":"page","status":"firing","count":3,
         "summary":"agent ci-runner-1 (role ci) tried evil.example:443"}},
       "timeline":[{"observedAt":"2026-11-30T02:00:00Z","source":"srt-violation","kind":"network",
         "action":"network-outbound","host":"evil.example\\u001b[2J","port":443,"reason":"host is not on the allow list"}],
       "omitted":0}
      """;

  @TempDir Path dir;

  @Test
  void printsTheTimelineAsATableWithHostileTextCleaned() throws Exception {
    try (HttpRecorder api = new HttpRecorder()) {
      api.script("/api/v1/commands/" + ID, new Answer(200, Map.of("Content-Type", "application/json"), TIMELINE));
      Path token = Files.writeString(dir.resolve("token"), "s3cr3t-t0k3n-0123456789\n");
      KnockwatchTest.Run r = KnockwatchTest.run("query", ID, "--api", api.url(""), "--token-file", token.toString());
      assertThat(r.code()).as(r.err()).isZero();
      assertThat(r.out()).contains("command  " + ID, "agent    ci-runner-1 (role ci)", "refused  evil.example:443 ×2, x.example:80 ×1",
          "firing", "off-role-host", "network-outbound").doesNotContain("\u001b");
      // a whole second keeps the column's width: the time is written with its milliseconds
      assertThat(r.out()).contains("  2026-11-30T02:00:00.000Z srt-violation network    network-outbound   evil.example");
      assertThat(api.requests().get(0).header("Authorization")).isEqualTo("Bearer s3cr3t-t0k3n-0123456789");
    }
  }

  @Test
  void ocsfAndEcsAreOneRecordALineEventsThenAlerts() throws Exception {
    try (HttpRecorder api = new HttpRecorder()) {
      Answer timeline = new Answer(200, Map.of("Content-Type", "application/json"), TIMELINE);
      api.script("/api/v1/commands/" + ID, timeline, timeline, new Answer(200, Map.of(), "{\"alerts\":{\"x\":{\"severity\":\"loud\"}}}"));
      Path token = Files.writeString(dir.resolve("token"), "s3cr3t-t0k3n-0123456789\n");
      KnockwatchTest.Run ocsf = KnockwatchTest.run("query", ID, "--format", "ocsf", "--api", api.url(""), "--token-file",
          token.toString());
      assertThat(ocsf.code()).as(ocsf.err()).isZero();
      assertThat(ocsf.out()).doesNotContain("\u001b");
      List<JsonNode> records = ocsf.out().lines().map(QueryCommandTest::read).toList();
      assertThat(records).hasSize(2);
      assertThat(records.get(0).path("class_uid").asInt()).isEqualTo(4001);
      assertThat(records.get(0).path("disposition").asText()).isEqualTo("Blocked");
      assertThat(records.get(0).path("dst_endpoint").path("port").asInt()).isEqualTo(443);
      assertThat(records.get(1).path("class_uid").asInt()).isEqualTo(2004);
      assertThat(records.get(1).path("finding_info").path("uid").asText()).isEqualTo("a53d44ed59dc6a19");
      assertThat(records.get(1).path("severity").asText()).isEqualTo("High");
      KnockwatchTest.Run ecs = KnockwatchTest.run("query", ID, "--format", "ecs", "--api", api.url(""), "--token-file",
          token.toString());
      assertThat(ecs.code()).as(ecs.err()).isZero();
      assertThat(ecs.out().lines().map(QueryCommandTest::read).map(r -> r.path("event").path("kind").asText()).toList())
          .containsExactly("event", "alert");
      KnockwatchTest.Run odd = KnockwatchTest.run("query", ID, "--format", "ocsf", "--api", api.url(""), "--token-file",
          token.toString());
      assertThat(odd.code()).isEqualTo(2);
      assertThat(odd.err()).isEqualTo("knockwatch: the query API's answer is not a timeline knockwatch can map"
          + " (IllegalArgumentException)\n");
      KnockwatchTest.Run bad = KnockwatchTest.run("query", ID, "--format", "cef", "--api", api.url(""));
      assertThat(bad.code()).isEqualTo(2);
      assertThat(bad.err()).contains("--format cef is not one of table, json, ocsf, ecs");
    }
  }

  @Test
  void anAgentsCommandsAndSandboxesAreListedOneALineWithHostileTextCleaned() throws Exception {
    String list = """
        {"commands":[{"commandId":"session:openshell-work/work-session","agentId":"openshell-work","role":"default",
          "events":3,"lastSeen":"2026-11-30T02:00:00Z","lastActive":"2026-11-30T02:00:00Z","alerts":2,"probe":false},
         {"commandId":"QueryQueryQueryQuery01\\u202e\\u001b[2J","agentId":"openshell-work","role":"default","events":1,
          "lastSeen":"2026-11-30T01:59:00.25Z","lastActive":"2026-11-30T01:59:00.25Z","alerts":0,"probe":false}]}
        """;
    try (HttpRecorder api = new HttpRecorder()) {
      api.script("/api/v1/commands", new Answer(200, Map.of("Content-Type", "application/json"), list),
          new Answer(200, Map.of("Content-Type", "application/json"), "{\"commands\":[]}"));
      Path token = Files.writeString(dir.resolve("token"), "s3cr3t-t0k3n-0123456789\n");
      KnockwatchTest.Run r = KnockwatchTest.run("query", "--agent", "openshell-*", "--api", api.url(""),
          "--token-file", token.toString());
      assertThat(r.code()).as(r.err()).isZero();
      List<String> lines = r.out().lines().toList();
      assertThat(lines).hasSize(3);
      assertThat(lines.get(1)).startsWith("  session:openshell-work/work-session ").contains(" openshell-work ")
          .endsWith("3      2  2026-11-30T02:00:00.000Z");
      assertThat(lines.get(2)).startsWith("  QueryQueryQueryQuery01").endsWith("2026-11-30T01:59:00.250Z");
      assertThat(r.out()).doesNotContain("\u001b", "\u202e");
      assertThat(api.requests().get(0).query()).isEqualTo("agent=openshell-*&limit=50");
      KnockwatchTest.Run none = KnockwatchTest.run("query", "--agent", "nobody", "--limit", "5", "--api", api.url(""),
          "--token-file", token.toString());
      assertThat(none.out()).contains("none: the timeline holds no refusal of an agent nobody");
      assertThat(api.requests().get(1).query()).isEqualTo("agent=nobody&limit=5");
    }
    KnockwatchTest.Run both = KnockwatchTest.run("query", ID, "--agent", "x");
    assertThat(both.code()).isEqualTo(Knockwatch.USAGE);
    assertThat(both.err()).contains("give a COMMAND_ID or --agent, not both");
    KnockwatchTest.Run neither = KnockwatchTest.run("query");
    assertThat(neither.code()).isEqualTo(Knockwatch.USAGE);
    assertThat(neither.err()).contains("give the COMMAND_ID to show, or --agent NAME");
    KnockwatchTest.Run ocsf = KnockwatchTest.run("query", "--agent", "x", "--format", "ocsf");
    assertThat(ocsf.err()).contains("--agent lists as table or json, not ocsf");
  }

  private static JsonNode read(String line) {
    try {
      return dev.knockwatch.events.Json.MAPPER.readTree(line);
    } catch (java.io.IOException e) {
      throw new AssertionError(line, e);
    }
  }

  @Test
  void refusalsOfTheApiAreOneLineErrors() throws Exception {
    try (HttpRecorder api = new HttpRecorder()) {
      api.script("/api/v1/commands/" + ID, Answer.of(401), Answer.of(404));
      Path token = Files.writeString(dir.resolve("token"), "wrong-token-0123456789");
      KnockwatchTest.Run denied = KnockwatchTest.run("query", ID, "--api", api.url(""), "--token-file", token.toString());
      assertThat(denied.code()).isEqualTo(Knockwatch.USAGE);
      assertThat(denied.err()).contains("the query API refused the token").doesNotContain("wrong-token");
      KnockwatchTest.Run unknown = KnockwatchTest.run("query", ID, "--api", api.url(""), "--token-file", token.toString());
      assertThat(unknown.err()).isEqualTo("knockwatch: the timeline holds no command with id " + ID
          + " (no refusal of it seen, or idle longer than its retention)" + System.lineSeparator());
    }
    KnockwatchTest.Run bad = KnockwatchTest.run("query", "short");
    assertThat(bad.code()).isEqualTo(Knockwatch.USAGE);
    assertThat(bad.err()).contains("not a command id");
  }
}
