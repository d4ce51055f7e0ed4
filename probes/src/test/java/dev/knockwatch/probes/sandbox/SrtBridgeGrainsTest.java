package dev.knockwatch.probes.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.CommandId;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.SourceLine;
import dev.knockwatch.ingest.formats.srt.SrtFormat;
import dev.knockwatch.ingest.formats.srt.SrtViolationParser;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A harness around srt gets Claude Code's grains: the bridge takes {@code --session} and
 * {@code --task} from its caller and writes them into every record, and ingest puts them on the
 * events, so that rules of {@code per: task} count a task's commands together.
 */
@Tag("integration")
class SrtBridgeGrainsTest {

  @TempDir Path dir;

  private record Ran(int exitCode, String out) {}

  private Ran bridge(String... extra) throws Exception {
    SrtBridge bridge = RealSandbox.prepare(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
    Files.writeString(dir.resolve("settings.json"), dev.knockwatch.probes.guard.GuardRunner.defaultSettings());
    Path work = Files.createDirectories(dir.resolve("work"));
    List<String> argv = new ArrayList<>(List.of("node", bridge.dir().resolve("bridge.mjs").toString(), "--settings",
        dir.resolve("settings.json").toString(), "--logs", dir.resolve("logs").toString(), "--agent", "harness-1",
        "--cwd", work.toString(), "--json"));
    argv.addAll(List.of(extra));
    Process p = new ProcessBuilder(NetworkGuard.wrap(argv)).directory(work.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).as(out).isTrue();
    return new Ran(p.exitValue(), out);
  }

  @Test
  void theCallersSessionAndTaskReachTheEvents() throws Exception {
    String id = CommandId.random();
    Ran r = bridge("--command-id", id, "--session", "run-42", "--task", "prompt-7", "-c",
        "curl -s --noproxy '' https://example.com/");
    assertThat(r.exitCode()).as(r.out()).isZero();
    List<String> records = Files.readAllLines(dir.resolve("logs/harness-1").resolve(id + SrtFormat.SUFFIX));
    assertThat(records).as(r.out()).isNotEmpty().allSatisfy(rec -> assertThat(rec).contains("\"sessionId\":\"run-42\"", "\"taskId\":\"prompt-7\""));
    Parsed p = new SrtViolationParser().parse(new SourceLine("harness-1/" + id + SrtFormat.SUFFIX, 0,
        records.get(0), "harness-1", id, "h", Instant.now()));
    assertThat(((Parsed.Events) p).events()).singleElement().satisfies(e -> {
      assertThat(e.sessionId()).isEqualTo("run-42");
      assertThat(e.taskId()).isEqualTo("prompt-7");
      assertThat(e.commandId()).isEqualTo(id);
    });
  }

  @Test
  void aTaskThatIsNoIdIsRefusedWithOneLine() throws Exception {
    Ran r = bridge("--task", "../other", "-c", "true");
    assertThat(r.exitCode()).isEqualTo(64);
    assertThat(r.out()).contains("--task must be 1-128 of [A-Za-z0-9_.:-], got \"../other\"");
  }

  @Test
  void aRecordsSessionThatIsNoIdIsLeftOut() {
    String rec = "{\"line\":\"deny network-outbound example.com:443 (user denied)\",\"commandId\":\"xhfHytmXL-L6RsYw2CrSjA\","
        + "\"sessionId\":\"a/b\",\"taskId\":\"t\\u0000\"}";
    Parsed p = new SrtViolationParser().parse(new SourceLine("a/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl", 0, rec, "a",
        "xhfHytmXL-L6RsYw2CrSjA", "h", Instant.now()));
    ViolationEvent e = ((Parsed.Events) p).events().get(0);
    assertThat(e.sessionId()).isNull();
    assertThat(e.taskId()).isNull();
  }
}
