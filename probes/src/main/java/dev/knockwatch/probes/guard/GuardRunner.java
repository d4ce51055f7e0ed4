package dev.knockwatch.probes.guard;

import dev.knockwatch.events.CommandId;
import dev.knockwatch.probes.sandbox.NetworkGuard;
import dev.knockwatch.probes.sandbox.SrtBridge;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Runs guard probes on the real sandbox, one fresh network guard and one fresh workspace each,
 * and writes each probe's result where ingest reads it. The refusals themselves (violation
 * records, the annotated stderr) are written by the bridge under the same command id, so they
 * travel the pipeline like any agent's.
 */
public final class GuardRunner {

  /** The agent the guard probes run as; roles.yaml maps it to the role guard-probe. */
  public static final String AGENT_ID = dev.knockwatch.events.ProbeAgents.GUARD;
  static final Duration PROBE_TIMEOUT = Duration.ofSeconds(60);

  private final SrtBridge bridge;
  private final Path logs;
  private final ProbeWorkspace workspace;
  private final Clock clock;

  public GuardRunner(SrtBridge bridge, Path logs, Path workDir, Clock clock) {
    this.bridge = bridge;
    this.logs = logs;
    this.workspace = new ProbeWorkspace(workDir);
    this.clock = clock;
  }

  /** The probes' default sandbox settings: nothing allowed out, ~/.ssh hidden, only . writable, .env denied. */
  public static String defaultSettings() {
    try (InputStream in = GuardRunner.class.getResourceAsStream("srt-settings.json")) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Runs {@code probes}, each under the settings {@code settingsFor} gives it (null: the default).
   *
   * @throws IllegalStateException when the network guard cannot be set up: no probe runs then
   */
  public List<ProbeOutcome> run(List<GuardProbe> probes, Function<GuardProbe, Path> settingsFor) {
    // checked once here; each probe's own namespace is checked again inside it before its command
    // starts (NetworkGuard.SCRIPT), and a probe whose guard fails does not run
    Optional<String> guard = NetworkGuard.check();
    if (guard.isPresent()) {
      throw new IllegalStateException("guard probes refuse to run without the network guard: " + guard.get());
    }
    List<ProbeOutcome> outcomes = new ArrayList<>();
    for (GuardProbe probe : probes) {
      outcomes.add(runOne(probe, settingsFor.apply(probe)));
    }
    return outcomes;
  }

  /**
   * Runs one probe; a run that saw neither the refusal nor a trace of the forbidden action (the
   * sandbox's proxy did not answer in time, say) is run once more, as a new command, and that run
   * is the outcome: a wall that lets the action through leaves its trace, and one that neither
   * refuses nor lets through twice is reported as not refusing.
   */
  private ProbeOutcome runOne(GuardProbe probe, Path settings) {
    Attempt first = attempt(probe, settings);
    Attempt outcome = first.verdict() != null && !first.verdict().conclusive() ? attempt(probe, settings) : first;
    if (outcome.verdict() != null) {
      try {
        publish(outcome.outcome());
      } catch (IOException e) {
        return new ProbeOutcome(probe.name(), outcome.outcome().commandId(), AGENT_ID, probe.kind(), probe.target(),
            probe.command(), probe.expected(), null, false, outcome.outcome().timestamp(), String.valueOf(e.getMessage()));
      }
    }
    return outcome.outcome();
  }

  /** One run of a probe: its outcome, and the verdict it was judged by (null: it did not run). */
  private record Attempt(ProbeOutcome outcome, GuardProbe.Verdict verdict) {}

  private Attempt attempt(GuardProbe probe, Path settings) {
    String commandId = CommandId.random();
    String at = clock.instant().toString();
    workspace.reset();
    try {
      if (settings == null) {
        Files.writeString(workspace.settings(), defaultSettings());
        settings = workspace.settings();
      }
      SrtBridge.Run run = bridge.run(settings, logs, AGENT_ID, commandId,
          workspace.work(), Map.of("HOME", workspace.home().toString()),
          probe.canary() ? GuardProbes.CANARY_PORT : 0, false, probe.command(), PROBE_TIMEOUT);
      GuardProbe.Verdict v = probe.judge(run, workspace);
      return new Attempt(new ProbeOutcome(probe.name(), commandId, AGENT_ID, probe.kind(), probe.target(),
          probe.command(), probe.expected(), v.observed(), v.refused(), at, null), v);
    } catch (IOException | RuntimeException e) {
      return new Attempt(new ProbeOutcome(probe.name(), commandId, AGENT_ID, probe.kind(), probe.target(),
          probe.command(), probe.expected(), null, false, at, String.valueOf(e.getMessage())), null);
    } finally {
      workspace.reset();
    }
  }

  private void publish(ProbeOutcome outcome) throws IOException {
    Path file = logs.resolve(AGENT_ID).resolve(outcome.commandId() + ".probe.jsonl");
    Files.createDirectories(file.getParent());
    Files.writeString(file, outcome.toJson() + "\n", StandardCharsets.UTF_8,
        StandardOpenOption.CREATE, StandardOpenOption.APPEND);
  }
}
