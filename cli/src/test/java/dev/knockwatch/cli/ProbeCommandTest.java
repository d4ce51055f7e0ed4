package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ProbeCommandTest {

  @TempDir Path dir;

  @Test
  void anUnknownProbeOrAHostileHostIsAUsageErrorBeforeAnythingRuns() {
    KnockwatchTest.Run r = KnockwatchTest.run("probe", "guard", "--only", "plain-http,nope", "--logs", dir.toString());
    assertThat(r.code()).isEqualTo(Knockwatch.USAGE);
    assertThat(r.err()).startsWith("knockwatch: no guard probe \"nope\"; there are [plain-http, https-connect,");

    r = KnockwatchTest.run("probe", "limit", "--hosts", "x.example;reboot:443", "--logs", dir.toString());
    assertThat(r.code()).isEqualTo(Knockwatch.USAGE);
    assertThat(r.err()).isEqualTo("knockwatch: host \"x.example;reboot:443\" is not host:port\n");

    r = KnockwatchTest.run("probe", "limit", "--engine", "docker", "--logs", dir.toString());
    assertThat(r.code()).isEqualTo(Knockwatch.USAGE);
    assertThat(r.err()).isEqualTo("knockwatch: --engine docker is not emitter or srt\n");
    assertThat(dir).isEmptyDirectory();
  }

  @Test
  void theEmitterWritesTheStormItWasAskedFor() throws Exception {
    KnockwatchTest.Run r = KnockwatchTest.run("probe", "limit", "--rate", "0", "--max", "600", "--commands", "3",
        "--hosts", "example.com:443,169.254.169.254:80", "--agents", "ci-runner-1,assistant-1", "--logs", dir.toString());
    assertThat(r.code()).isZero();
    assertThat(r.out()).startsWith("emitter: 600 refusals for 3 commands in ");
    List<String> ids = r.out().lines().skip(1).map(String::strip).toList();
    assertThat(ids).hasSize(3);
    List<String> lines = Files.readAllLines(dir.resolve("assistant-1").resolve(ids.get(1) + ".violations.jsonl"));
    assertThat(lines).hasSize(200);
    JsonNode rec = Json.MAPPER.readTree(lines.get(0));
    assertThat(rec.get("line").asText()).isEqualTo("deny network-outbound 169.254.169.254:80 (host is not on the allow list)");
    assertThat(rec.get("commandId").asText()).isEqualTo(ids.get(1));
  }

  @Test
  @Tag("integration")
  void guardOnTheRealSandboxPrintsOneResultAProbeAndExitsZeroWhenTheWallHolds() throws Exception {
    KnockwatchTest.Run r = KnockwatchTest.run("probe", "guard", "--json", "--only", "plain-http,dotenv-write",
        "--logs", dir.resolve("logs").toString(), "--work", dir.resolve("work").toString());
    assertThat(r.code()).as(r.err()).isZero();
    List<JsonNode> results = r.out().lines().map(l -> {
      try {
        return Json.MAPPER.readTree(l);
      } catch (Exception e) {
        throw new AssertionError(l, e);
      }
    }).toList();
    assertThat(results).extracting(j -> j.get("probe").asText()).containsExactly("plain-http", "dotenv-write");
    assertThat(results).allSatisfy(j -> {
      assertThat(j.get("refused").asBoolean()).isTrue();
      assertThat(j.get("commandId").asText()).hasSize(22);
      assertThat(j.get("expected").asText()).isNotBlank();
      assertThat(dir.resolve("logs/knockwatch-guard").resolve(j.get("commandId").asText() + ".probe.jsonl")).exists();
    });

    Path allowing = Files.writeString(dir.resolve("allow.json"), dev.knockwatch.probes.guard.GuardRunner.defaultSettings()
        .replace("\"allowedDomains\": []", "\"allowedDomains\": [\"localhost\"]"));
    r = KnockwatchTest.run("probe", "guard", "--only", "plain-http", "--settings", allowing.toString(),
        "--logs", dir.resolve("logs").toString(), "--work", dir.resolve("work").toString());
    assertThat(r.code()).isEqualTo(ProbeCommand.WALL_BREACHED);
    assertThat(r.out()).startsWith("plain-http         BREACH   reached: knockwatch canary reached");
  }
}
