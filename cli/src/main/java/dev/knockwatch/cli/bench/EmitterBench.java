package dev.knockwatch.cli.bench;

import picocli.CommandLine;
import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.cli.run.UsageException;
import dev.knockwatch.probes.guard.GuardProbes;
import dev.knockwatch.probes.guard.GuardRunner;
import dev.knockwatch.probes.guard.ProbeOutcome;
import dev.knockwatch.probes.limit.LimitEmitter;
import dev.knockwatch.probes.limit.LimitPlan;
import dev.knockwatch.probes.limit.SrtLimitProbe;
import dev.knockwatch.probes.sandbox.RealSandbox;
import dev.knockwatch.probes.sandbox.SrtBridge;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The limit probes' two engines: the emitter's lines per second (as fast as it can, spread over
 * many commands, to a fresh directory each run), and with --srt what the real sandbox gives.
 */
@Command(name = "emitter", mixinStandardHelpOptions = true,
    description = {"Lines/s the limit emitter writes (srt records, as the bridge writes them); --srt: refusals/s through the real srt."})
final class EmitterBench implements Callable<Integer> {

  private static final Logger log = LoggerFactory.getLogger(EmitterBench.class);

  @Mixin Report report;

  @Option(names = "--lines", defaultValue = "2000000", description = "Lines a run (default: ${DEFAULT-VALUE}).")
  long lines;

  @Option(names = "--commands", defaultValue = "100", description = "Commands the lines are spread over (default: ${DEFAULT-VALUE}).")
  int commands;

  @Option(names = "--runs", defaultValue = "5", description = "Runs; the median is reported (default: ${DEFAULT-VALUE}).")
  int runs;

  @Option(names = "--srt", description = "Also time the real srt: 4 commands of 10 retries each, and the 10 guard probes.")
  boolean srt;

  @Override
  public Integer call() throws Exception {
    if (lines < 1 || commands < 1 || runs < 1) {
      throw new UsageException("--lines, --commands and --runs must be at least 1");
    }
    Path tmp = Files.createTempDirectory("knockwatch-bench-emitter-");
    try {
      List<Long> perSecond = new ArrayList<>();
      long bytes = 0;
      for (int i = 0; i < runs; i++) {
        Path logs = tmp.resolve("run-" + i);
        LimitEmitter.Result r = new LimitEmitter(logs,
            Clock.systemUTC()).run(new LimitPlan(
                LimitPlan.Pattern.STEADY, 0, Duration.ZERO, lines, commands,
                List.of("example.com:443", "169.254.169.254:80", "registry.npmjs.org:443"),
                List.of("ci-runner-1", "assistant-1", "unknown-agent"), Duration.ofMinutes(5), 4));
        perSecond.add(Math.round(r.perSecond()));
        try (Stream<Path> files = Files.walk(logs)) {
          bytes = files.filter(Files::isRegularFile).mapToLong(f -> f.toFile().length()).sum();
        }
        log.info("emitter run {}: {} lines/s", i + 1, Math.round(r.perSecond()));
        EmbeddedKafkaBroker.wipe(logs);
      }
      List<Long> sorted = perSecond.stream().sorted().toList();
      Map<String, Object> result = new LinkedHashMap<>();
      result.put("lines", lines);
      result.put("commands", commands);
      result.put("bytesPerRun", bytes);
      result.put("linesPerSecondRuns", perSecond);
      result.put("linesPerSecondMedian", Stats.percentile(sorted, 50));
      result.put("linesPerSecondMin", sorted.get(0));
      if (srt) {
        SrtBridge bridge = RealSandbox.prepare(System.err);
        long t0 = System.nanoTime();
        List<String> ids = new SrtLimitProbe(bridge, tmp.resolve("srt-logs"),
            tmp.resolve("srt-work")).run(new LimitPlan(
                LimitPlan.Pattern.BURST, 0, Duration.ZERO, 40, 4, List.of("example.com:443"),
                List.of("ci-runner-1"), Duration.ofMinutes(5), 4));
        double srtSeconds = (System.nanoTime() - t0) / 1e9;
        long refusals = 0;
        for (String id : ids) {
          refusals += Files.readAllLines(tmp.resolve("srt-logs/ci-runner-1").resolve(id + ".violations.jsonl")).size();
        }
        result.put("srtRefusals", refusals);
        result.put("srtSeconds", Math.round(srtSeconds * 100) / 100.0);
        result.put("srtRefusalsPerSecond", Math.round(refusals / srtSeconds * 10) / 10.0);
        long g0 = System.nanoTime();
        List<ProbeOutcome> guard = new GuardRunner(bridge,
            tmp.resolve("guard-logs"), tmp.resolve("guard-work"), Clock.systemUTC())
            .run(GuardProbes.all(), p -> null);
        result.put("guardProbes", guard.size());
        result.put("guardRefused", guard.stream().filter(o -> o.ran() && o.refused()).count());
        result.put("guardSeconds", Math.round((System.nanoTime() - g0) / 1e7) / 100.0);
      }
      report.print(result);
      return CommandLine.ExitCode.OK;
    } finally {
      EmbeddedKafkaBroker.wipe(tmp);
    }
  }
}
