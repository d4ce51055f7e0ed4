package dev.knockwatch.probes.limit;

import dev.knockwatch.events.CommandId;
import dev.knockwatch.probes.guard.GuardRunner;
import dev.knockwatch.probes.sandbox.SrtBridge;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ExecutionException;

/**
 * The realistic limit engine: every command of the plan is one real command in srt (behind the
 * network guard) that retries with curl, so each refusal is srt's own. Limited by process
 * start-up: a few commands a second, not thousands of lines.
 */
public final class SrtLimitProbe {

  static final int PARALLEL = 4;

  private final SrtBridge bridge;
  private final Path logs;
  private final Path workDir;

  public SrtLimitProbe(SrtBridge bridge, Path logs, Path workDir) {
    this.bridge = bridge;
    this.logs = logs.toAbsolutePath();
    this.workDir = workDir.toAbsolutePath(); // each command's HOME and cwd, seen from inside the sandbox
  }

  /** Runs the plan; returns the command ids. */
  public List<String> run(LimitPlan plan) {
    long perCommand = attemptsPerCommand(plan);
    double sleep = sleepSeconds(plan);
    ExecutorService pool = Executors.newFixedThreadPool(Math.min(PARALLEL, plan.commands()));
    try {
      Path settings = Files.createDirectories(workDir).resolve("srt-settings.json");
      Files.writeString(settings, GuardRunner.defaultSettings());
      List<Future<String>> runs = new ArrayList<>();
      for (int i = 0; i < plan.commands(); i++) {
        String agent = plan.agents().get(i % plan.agents().size());
        String command = command(plan.hosts().get(i % plan.hosts().size()), perCommand, sleep);
        Path cwd = Files.createDirectories(workDir.resolve("work-" + i));
        Duration timeout = Duration.ofSeconds((long) (perCommand * (sleep + 6)) + 60);
        runs.add(pool.submit(() -> bridge.run(settings, logs, agent, CommandId.random(), cwd,
            Map.of("HOME", cwd.toString()), 0, false, command, timeout).commandId()));
      }
      List<String> ids = new ArrayList<>();
      for (Future<String> f : runs) {
        ids.add(f.get());
      }
      return ids;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (ExecutionException e) {
      throw new IllegalStateException("a limit probe command failed: " + e.getCause().getMessage(), e.getCause());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return List.of();
    } finally {
      pool.shutdownNow();
    }
  }

  /** Attempts each command makes; an IllegalArgumentException when the plan cannot run on srt. */
  public static long attemptsPerCommand(LimitPlan plan) {
    long total;
    if (plan.pattern() == LimitPlan.Pattern.SLOW) {
      total = (long) Math.floor(plan.duration().toSeconds() / plan.slowInterval()) * plan.commands();
    } else if (plan.rate() > 0) {
      total = (long) Math.ceil(plan.rate() * plan.duration().toSeconds());
    } else if (plan.maxAttempts() > 0) {
      total = plan.maxAttempts();
    } else {
      throw new IllegalArgumentException("the srt engine needs a rate above 0 or a maximum number of attempts");
    }
    if (plan.maxAttempts() > 0) {
      total = Math.min(total, plan.maxAttempts());
    }
    return Math.max(1, (total + plan.commands() - 1) / plan.commands());
  }

  static double sleepSeconds(LimitPlan plan) {
    return switch (plan.pattern()) {
      case BURST -> 0;
      case SLOW -> plan.slowInterval();
      case STEADY -> plan.rate() == 0 ? 0 : plan.commands() / plan.rate();
    };
  }

  /** The shell loop one command runs: curl through the proxy, again and again. */
  static String command(String target, long attempts, double sleep) {
    return "for i in $(seq 1 " + attempts + "); do curl -s -o /dev/null --max-time 5 --noproxy '' " + LimitPlan.url(target)
        + "; sleep " + String.format(Locale.ROOT, "%.3f", sleep) + "; done";
  }
}
