package dev.knockwatch.probes.limit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.SourceLine;
import dev.knockwatch.ingest.formats.srt.SrtViolationParser;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class LimitEmitterTest {

  @TempDir Path logs;

  static final Instant CAPTURED = Instant.parse("2026-11-29T18:45:33.593Z");

  /** srt's record of `curl -s https://example.com` with a commandId, captured through the library. */
  static JsonNode capturedRecord() throws Exception {
    try (InputStream in = LimitEmitterTest.class.getResourceAsStream("/fixtures/srt-0.0.83/h-api-violations.json")) {
      JsonNode run = Json.MAPPER.readTree(in).get("runs").get(1);
      assertThat(run.get("label").asText()).isEqualTo("https-connect-not-allowed");
      return run.get("getViolationsForCommand").get(0);
    }
  }

  static LimitPlan plan(LimitPlan.Pattern pattern, double rate, long max, int commands, List<String> hosts,
      List<String> agents) {
    return new LimitPlan(pattern, rate, Duration.ZERO, max, commands, hosts, agents, Duration.ofMinutes(5), 4);
  }

  @Test
  void theEmittedRecordIsSrtsOwnFieldByField() throws Exception {
    Clock clock = Clock.fixed(CAPTURED, ZoneOffset.UTC);
    LimitEmitter.Result r = new LimitEmitter(logs, clock)
        .run(plan(LimitPlan.Pattern.STEADY, 0, 1, 1, List.of("example.com:443"), List.of("ci-runner-7")));
    String id = r.commandIds().get(0);
    String line = Files.readString(logs.resolve("ci-runner-7").resolve(id + ".violations.jsonl"));
    JsonNode emitted = Json.MAPPER.readTree(line);
    JsonNode captured = capturedRecord();

    // srt's four fields first, in srt's order, then the two the bridge adds
    List<String> names = new ArrayList<>();
    emitted.fieldNames().forEachRemaining(names::add);
    List<String> srtNames = new ArrayList<>();
    captured.fieldNames().forEachRemaining(srtNames::add);
    assertThat(names).containsExactly(srtNames.get(0), srtNames.get(1), srtNames.get(2), srtNames.get(3),
        "commandId", "agentId");
    for (Iterator<String> it = captured.fieldNames(); it.hasNext(); ) {
      String f = it.next();
      if (!f.equals("encodedCommand")) {
        assertThat(emitted.get(f)).as(f).isEqualTo(captured.get(f));
      }
    }
    // srt encodes the commandId it was given, padded base64
    assertThat(emitted.get("encodedCommand").asText())
        .isEqualTo(Base64.getEncoder().encodeToString(id.getBytes(StandardCharsets.UTF_8)))
        .hasSameSizeAs(captured.get("encodedCommand").asText());
    assertThat(line).endsWith("\n").doesNotContain("\n\n");
  }

  @Test
  void ingestMakesTheSameEventOfTheEmittedLineAsOfTheCapturedOne() throws Exception {
    LimitEmitter.Result r = new LimitEmitter(logs, Clock.fixed(CAPTURED, ZoneOffset.UTC))
        .run(plan(LimitPlan.Pattern.STEADY, 0, 1, 1, List.of("example.com:443"), List.of("ci-runner-7")));
    String id = r.commandIds().get(0);
    String emitted = Files.readString(logs.resolve("ci-runner-7").resolve(id + ".violations.jsonl")).strip();
    ObjectNode captured = (ObjectNode) capturedRecord();
    captured.put("encodedCommand", Base64.getEncoder().encodeToString(id.getBytes(StandardCharsets.UTF_8)));
    captured.put("commandId", id);
    captured.put("agentId", "ci-runner-7");

    ViolationEvent a = parse(emitted, id);
    ViolationEvent b = parse(captured.toString(), id);
    assertThat(a).usingRecursiveComparison().ignoringFields("eventId", "ingestedAt", "origin").isEqualTo(b);
    assertThat(a.host()).isEqualTo("example.com");
    assertThat(a.port()).isEqualTo(443);
    assertThat(a.reason()).isEqualTo("host is not on the allow list");
  }

  static ViolationEvent parse(String line, String id) {
    Parsed p = new SrtViolationParser().parse(new SourceLine("ci-runner-7/" + id + ".violations.jsonl", 0, line,
        "ci-runner-7", id, "h", CAPTURED));
    assertThat(p).isInstanceOf(Parsed.Events.class);
    return ((Parsed.Events) p).events().get(0);
  }

  @Test
  void commandsHostsAndAgentsAreSpreadRoundRobin() throws Exception {
    LimitEmitter.Result r = new LimitEmitter(logs, Clock.systemUTC()).run(plan(LimitPlan.Pattern.STEADY, 0, 30, 3,
        List.of("example.com:443", "evil.example:80"), List.of("ci-runner-1", "assistant-2")));
    assertThat(r.attempts()).isEqualTo(30);
    assertThat(r.commandIds()).hasSize(3).doesNotHaveDuplicates();
    List<String> c0 = Files.readAllLines(logs.resolve("ci-runner-1").resolve(r.commandIds().get(0) + ".violations.jsonl"));
    List<String> c1 = Files.readAllLines(logs.resolve("assistant-2").resolve(r.commandIds().get(1) + ".violations.jsonl"));
    List<String> c2 = Files.readAllLines(logs.resolve("ci-runner-1").resolve(r.commandIds().get(2) + ".violations.jsonl"));
    assertThat(c0).hasSize(10).allSatisfy(l -> assertThat(l).contains("deny network-outbound example.com:443 ")
        .contains("\"command\":\"curl -s https://example.com\""));
    assertThat(c1).hasSize(10).allSatisfy(l -> assertThat(l).contains("deny network-outbound evil.example:80 ")
        .contains("\"command\":\"curl -s http://evil.example\""));
    assertThat(c2).hasSize(10);
  }

  @Test
  void steadyOwesOneAttemptPerTickOfTheRate() {
    LimitPlan p = new LimitPlan(LimitPlan.Pattern.STEADY, 10, Duration.ofSeconds(5), 0, 2, List.of("a.example:443"),
        List.of("a"), Duration.ofMinutes(5), 4);
    assertThat(LimitEmitter.owed(p, 0, 0, 2)).isEqualTo(1);
    assertThat(LimitEmitter.owed(p, 1_000_000_000L, 1, 2)).isEqualTo(10); // 11 due by 1.0 s
    assertThat(LimitEmitter.owed(p, 1_050_000_000L, 11, 2)).isZero();
  }

  @Test
  void burstOwesTheWholeSecondAtItsStart() {
    LimitPlan p = new LimitPlan(LimitPlan.Pattern.BURST, 50, Duration.ofSeconds(5), 0, 1, List.of("a.example:443"),
        List.of("a"), Duration.ofMinutes(5), 4);
    assertThat(LimitEmitter.owed(p, 0, 0, 1)).isEqualTo(50);
    assertThat(LimitEmitter.owed(p, 999_000_000L, 50, 1)).isZero();
    assertThat(LimitEmitter.owed(p, 1_000_000_000L, 50, 1)).isEqualTo(50);
  }

  @Test
  void slowKeepsEveryCommandUnderItsWindowsLimit() {
    // 3 attempts per command and 5-minute window: one every 100 s, 4 commands together
    LimitPlan p = new LimitPlan(LimitPlan.Pattern.SLOW, 0, Duration.ofMinutes(30), 0, 4, List.of("a.example:443"),
        List.of("a"), Duration.ofMinutes(5), 3);
    assertThat(LimitEmitter.owed(p, 0, 0, 4)).isEqualTo(4);
    assertThat(LimitEmitter.owed(p, 99_000_000_000L, 4, 4)).isZero();
    assertThat(LimitEmitter.owed(p, 100_000_000_000L, 4, 4)).isEqualTo(4);
    // over any 5 minutes (300 s) a command gets at most 3 attempts (t = 0, 100, 200; the 4th at 300)
    long due = 0;
    for (long t = 0; t < 300_000_000_000L; t += 1_000_000_000L) {
      due += LimitEmitter.owed(p, t, due, 4);
    }
    assertThat(due / 4).isEqualTo(3);
  }

  @Test
  void hostileHostsAndAgentsAreRefusedBeforeAnythingIsWritten() {
    assertThatThrownBy(() -> plan(LimitPlan.Pattern.STEADY, 1, 1, 1, List.of("x.example;rm -rf ~:443"), List.of("a")))
        .hasMessage("host \"x.example;rm -rf ~:443\" is not host:port");
    assertThatThrownBy(() -> plan(LimitPlan.Pattern.STEADY, 1, 1, 1, List.of("x\".example:443"), List.of("a")))
        .hasMessageContaining("is not host:port");
    assertThatThrownBy(() -> plan(LimitPlan.Pattern.STEADY, 1, 1, 1, List.of("example.com"), List.of("a")))
        .hasMessage("host \"example.com\" is not host:port");
    assertThatThrownBy(() -> plan(LimitPlan.Pattern.STEADY, 1, 1, 1, List.of("example.com:443"), List.of("../etc")))
        .hasMessage("agent \"../etc\" is not 1-128 of [A-Za-z0-9._-]");
    assertThatThrownBy(() -> plan(LimitPlan.Pattern.STEADY, 1, 1, 0, List.of("example.com:443"), List.of("a")))
        .hasMessage("commands must be at least 1, not 0");
    assertThat(plan(LimitPlan.Pattern.STEADY, 1, 1, 1, List.of("[2001:db8::1]:443", "127.0.0.1:80"), List.of("a")).hosts())
        .hasSize(2);
  }
}
