package dev.knockwatch.probes.guard;

import dev.knockwatch.events.Sanitize;
import dev.knockwatch.probes.sandbox.SrtBridge;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One guard probe: a command that the sandbox must refuse, and how to tell that it did.
 *
 * @param name stable name, the {@code probe} of its result
 * @param kind network, filesystem or unix-socket (the probe result's {@code kind})
 * @param target what the command reaches for: host:port, a URL or a path ({@code ~} is the
 *     probe's home)
 * @param command the shell command run in the sandbox
 * @param expected the refusal, in words
 * @param evidence what the command prints when refused (matched on stdout + stderr)
 * @param breach what shows that the forbidden action happened anyway, checked even when the
 *     evidence is there; empty when nothing does
 * @param canary whether the command needs the canary page on 127.0.0.1 (network probes)
 */
public record GuardProbe(String name, String kind, String target, String command, String expected,
    Pattern evidence, Breach breach, boolean canary) {

  static final int MAX_OBSERVED = 240;

  /** Looks for the forbidden action's traces after the run. */
  @FunctionalInterface
  public interface Breach {
    Optional<String> find(SrtBridge.Run run, ProbeWorkspace workspace);
  }

  /** Refused when the evidence is there and no trace of the forbidden action is. */
  public Verdict judge(SrtBridge.Run run, ProbeWorkspace workspace) {
    Optional<String> breached = breach.find(run, workspace);
    if (breached.isPresent()) {
      return new Verdict(false, clip(breached.get()), true);
    }
    Matcher m = evidence.matcher(run.output());
    if (m.find()) {
      return new Verdict(true, clip(m.group().strip()), true);
    }
    return new Verdict(false, clip("no refusal seen: exit " + run.exitCode() + lastLine(run)), false);
  }

  /**
   * Whether the probe was refused, and what was seen; {@code conclusive}: the refusal, or a trace
   * of the forbidden action, was seen (not, say, a proxy that did not answer a loaded machine).
   */
  public record Verdict(boolean refused, String observed, boolean conclusive) {}

  private static String lastLine(SrtBridge.Run run) {
    String[] lines = run.output().strip().split("\n");
    String last = lines.length == 0 ? "" : lines[lines.length - 1].strip();
    return last.isEmpty() ? "" : ", " + last;
  }

  private static String clip(String s) {
    return Sanitize.text(s, MAX_OBSERVED);
  }
}
