package dev.knockwatch.cli;

import dev.knockwatch.probes.claudecode.ClaudeCode;
import dev.knockwatch.probes.claudecode.ClaudeCodeProbe;
import dev.knockwatch.probes.guard.GuardProbes;
import dev.knockwatch.probes.guard.GuardRunner;
import dev.knockwatch.probes.guard.ProbeOutcome;
import dev.knockwatch.probes.limit.LimitEmitter;
import dev.knockwatch.probes.limit.LimitPlan;
import dev.knockwatch.probes.limit.SrtLimitProbe;
import dev.knockwatch.probes.sandbox.RealSandbox;
import dev.knockwatch.probes.sandbox.SrtBridge;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The probes of {@code up}: the guard probes at start and every 10 minutes (and the Claude Code
 * checklist with the user's settings, where a {@code claude} is on the PATH, and Codex's with the
 * user's config.toml, where a {@code codex} is), and a gentle limit
 * probe whose one command crosses the persistent-retry threshold, so a newcomer sees refusals, an
 * alert and a timeline within a minute. Everything runs on one background thread; when srt
 * cannot run here the emitter writes the demo instead, and {@code up} says so once.
 */
final class UpProbes implements AutoCloseable {

  static final Duration GUARD_EVERY = Duration.ofMinutes(10);
  static final int DEMO_ATTEMPTS = 6;
  static final String DEMO_HOST = "example.com:443";

  private final Path logs;
  private final Path work;
  private final PrintWriter out;
  private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "knockwatch-probes");
    t.setDaemon(true);
    return t;
  });

  private final Function<PrintStream, SrtBridge> sandbox;
  /** Set first when up stops: a run cut short then says it was interrupted, never a count of refusals. */
  private volatile boolean stopping;

  UpProbes(Path logs, Path work, PrintWriter out) {
    this(logs, work, out, RealSandbox::prepare);
  }

  /** {@code sandbox} makes the real sandbox ready, or throws saying why it cannot run here. */
  UpProbes(Path logs, Path work, PrintWriter out, Function<PrintStream, SrtBridge> sandbox) {
    this.logs = logs;
    this.work = work;
    this.out = out;
    this.sandbox = sandbox;
  }

  void start() {
    thread.execute(this::begin);
  }

  /** Waits until what was started has run (the first guard run and the demo); for tests. */
  boolean awaitStarted(Duration timeout) throws InterruptedException {
    java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(1);
    // queued behind what begin() queues: the first guard run and the demo
    thread.execute(() -> thread.execute(done::countDown));
    return done.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  private void begin() {
    SrtBridge bridge;
    ByteArrayOutputStream said = new ByteArrayOutputStream();
    try (PrintStream say = new PrintStream(said, true, StandardCharsets.UTF_8)) {
      bridge = sandbox.apply(say);
    } catch (RuntimeException e) {
      emitDemo("srt cannot run here (" + e.getMessage() + "): no guard probes");
      return;
    }
    if (said.size() > 0) {
      // what preparing the sandbox said (installing ...) carries its own "knockwatch: " already
      synchronized (out) {
        out.println(said.toString(StandardCharsets.UTF_8).strip());
        out.flush();
      }
    }
    thread.scheduleWithFixedDelay(() -> guard(bridge), 0, GUARD_EVERY.toMillis(), TimeUnit.MILLISECONDS);
    thread.execute(() -> demo(bridge));
    // the user's own Claude Code, where one is installed: its wall, with the user's settings
    claudeOnPath().ifPresent(claude -> thread.scheduleWithFixedDelay(() -> claudeCode(claude), 0,
        GUARD_EVERY.toMillis(), TimeUnit.MILLISECONDS));
    // and the user's own Codex CLI, with the user's config.toml
    onPath("codex").ifPresent(codex -> thread.scheduleWithFixedDelay(() -> codex(codex), 0,
        GUARD_EVERY.toMillis(), TimeUnit.MILLISECONDS));
  }

  /** {@code claude} on the PATH: the user's Claude Code (the pinned build of the tests is not theirs). */
  static java.util.Optional<Path> claudeOnPath() {
    return onPath("claude");
  }

  /** An executable of this name on the PATH. */
  static java.util.Optional<Path> onPath(String name) {
    String path = System.getenv("PATH");
    for (String dir : path == null ? new String[0] : path.split(java.io.File.pathSeparator)) {
      Path p = Path.of(dir.isEmpty() ? "." : dir, name);
      if (java.nio.file.Files.isExecutable(p) && !java.nio.file.Files.isDirectory(p)) {
        return java.util.Optional.of(p);
      }
    }
    return java.util.Optional.empty();
  }

  private void claudeCode(Path claude) {
    try {
      List<ProbeOutcome> outcomes = new ClaudeCodeProbe(new ClaudeCode(claude), logs, work.resolve("claude-code"),
          Clock.systemUTC()).run(ClaudeCodeProbe.userSettingsFiles());
      say(stopping ? interrupted("claude-code probe") : summary("claude-code probe (" + claude + "): ", "walled", outcomes));
    } catch (Exception e) {
      say(stopping ? interrupted("claude-code probe") : "claude-code probe did not run: " + e.getMessage());
    }
  }

  private void codex(Path codex) {
    try {
      List<ProbeOutcome> outcomes = new dev.knockwatch.probes.codex.CodexProbe(new dev.knockwatch.probes.codex.Codex(codex),
          logs, work.resolve("codex"), Clock.systemUTC()).run(dev.knockwatch.probes.codex.CodexProbe.userConfig()
          .orElse(null));
      say(stopping ? interrupted("codex probe") : summary("codex probe (" + codex + "): ", "walled", outcomes));
    } catch (Exception e) {
      say(stopping ? interrupted("codex probe") : "codex probe did not run: " + e.getMessage());
    }
  }

  private void guard(SrtBridge bridge) {
    try {
      List<ProbeOutcome> outcomes = new GuardRunner(bridge, logs, work.resolve("guard"), Clock.systemUTC())
          .run(GuardProbes.all(), p -> null);
      if (stopping) {
        say(interrupted("guard probes"));
        return;
      }
      List<String> errors = outcomes.stream().filter(o -> !o.ran()).map(ProbeOutcome::error).distinct().toList();
      if (errors.size() == 1 && outcomes.stream().noneMatch(ProbeOutcome::ran)) {
        say("guard probes did not run: " + errors.get(0));
        return;
      }
      say(summary("guard probes: ", "refused", outcomes));
    } catch (RuntimeException e) {
      say(stopping ? interrupted("guard probes") : "guard probes did not run: " + e.getMessage());
    }
  }

  /** {@code N of M <word>}, then each probe that did not run and each breach, with what was seen. */
  private static String summary(String head, String word, List<ProbeOutcome> outcomes) {
    long refused = outcomes.stream().filter(o -> o.ran() && o.refused()).count();
    StringBuilder line = new StringBuilder(head + refused + " of " + outcomes.size() + " " + word);
    for (ProbeOutcome o : outcomes) {
      if (!o.ran()) {
        line.append("; ").append(o.probe()).append(" did not run: ").append(o.error());
      } else if (!o.refused()) {
        line.append("; WALL BREACH ").append(o.probe()).append(": ").append(o.observed());
      }
    }
    return line.toString();
  }

  private void demo(SrtBridge bridge) {
    List<String> ids;
    try {
      ids = new SrtLimitProbe(bridge, logs, work.resolve("limit")).run(LimitPlan.demo(DEMO_HOST, DEMO_ATTEMPTS));
    } catch (RuntimeException e) {
      if (stopping) {
        say(interrupted("limit probe"));
      } else {
        emitDemo("the demo could not run in the real sandbox (" + e.getMessage() + ")");
      }
      return;
    }
    if (stopping) {
      say(interrupted("limit probe"));
      return;
    }
    say("limit probe: command " + ids.get(0) + " knocked " + DEMO_ATTEMPTS + " times on " + DEMO_HOST
        + " in the real sandbox (persistent-retry threshold 5)");
  }

  /** The demo without the sandbox: the emitter writes srt's records of it; {@code why} is said once, with them. */
  private void emitDemo(String why) {
    LimitEmitter.Result r = new LimitEmitter(logs, Clock.systemUTC()).run(LimitPlan.demo(DEMO_HOST, DEMO_ATTEMPTS));
    say(why + "; the emitter wrote the demo's " + r.attempts() + " refusals for command " + r.commandIds().get(0));
  }

  private void say(String message) {
    synchronized (out) {
      out.println("knockwatch: " + message);
      out.flush();
    }
  }

  private static String interrupted(String what) {
    return what + ": interrupted, knockwatch is stopping";
  }

  @Override
  public void close() {
    stopping = true;
    thread.shutdownNow();
    try {
      // the run cut short says so before up's last line
      thread.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
