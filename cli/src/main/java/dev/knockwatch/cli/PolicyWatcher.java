package dev.knockwatch.cli;

import dev.knockwatch.streams.DetectionTopology;
import dev.knockwatch.streams.lifecycle.AlertLifecycleProcessor;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.PolicyFiles;
import dev.knockwatch.streams.rules.PolicyLoader;
import dev.knockwatch.streams.rules.PolicyPublisher;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * {@code up}'s eye on the alert-rules directory: when the files change and still load, the new
 * policy is published to {@code knockwatch.policy} (roles apply at once on every instance) and,
 * when the rules themselves changed, detection restarts with them. Files that do not load, and
 * rules that load but that detection cannot run (its topology is built first, as {@code streams}
 * builds it), are reported once, with every problem, and the running policy stays: nothing is
 * published, and detection keeps running.
 */
final class PolicyWatcher implements Runnable, AutoCloseable {

  private final Path dir;
  private final String bootstrapServers;
  private final Map<String, Object> clientProps;
  private final Consumer<Policy> onNewRules;
  /** Why detection cannot run a policy that loaded, or null. */
  private final Function<Policy, String> unrunnable;
  private final PrintStream out;
  private final Duration every;
  private volatile boolean running = true;
  private PolicyFiles current;
  private List<String> lastProblems = List.of();
  /** The files' bytes at the last look: unchanged bytes are not parsed again. */
  private Map<String, byte[]> lastSeen;

  PolicyWatcher(Path dir, String bootstrapServers, Map<String, Object> clientProps, PolicyFiles current,
      Consumer<Policy> onNewRules, PrintStream out, Duration every) {
    this(dir, bootstrapServers, clientProps, current, onNewRules, out, every, PolicyWatcher::whyDetectionCannotRun);
  }

  PolicyWatcher(Path dir, String bootstrapServers, Map<String, Object> clientProps, PolicyFiles current,
      Consumer<Policy> onNewRules, PrintStream out, Duration every, Function<Policy, String> unrunnable) {
    this.unrunnable = unrunnable;
    this.dir = dir;
    this.bootstrapServers = bootstrapServers;
    this.clientProps = clientProps;
    this.current = current;
    this.onNewRules = onNewRules;
    this.out = out;
    this.every = every;
  }

  @Override
  public void run() {
    while (running) {
      try {
        Thread.sleep(every.toMillis());
      } catch (InterruptedException e) {
        return;
      }
      checkOnce();
    }
  }

  /** Looks at the files once; publishes (and restarts detection) when they changed and load. */
  void checkOnce() {
    Map<String, byte[]> seen = look(dir);
    if (lastSeen != null && sameBytes(seen, lastSeen)) {
      return; // parsing the files every look was most of an idle watcher's CPU
    }
    check();
    lastSeen = seen; // after: a publish that failed is tried again at the next look
  }

  private void check() {
    List<String> problems = PolicyLoader.check(dir);
    if (!problems.isEmpty()) {
      report(" changed but does not load", problems);
      return;
    }
    PolicyFiles next = PolicyLoader.files(dir);
    if (next.version().equals(current.version())) {
      lastProblems = List.of();
      return;
    }
    boolean rulesChanged = !Objects.equals(next.rules(), current.rules())
        || !Objects.equals(next.moreRules(), current.moreRules());
    Policy policy = rulesChanged ? PolicyLoader.load(next, dir.toString()) : null;
    String why = policy == null ? null : unrunnable.apply(policy);
    if (why != null) {
      report(" changed and loads, but detection cannot run it", List.of(why));
      return;
    }
    lastProblems = List.of();
    PolicyPublisher.publish(bootstrapServers, clientProps, next);
    current = next;
    out.println("knockwatch: policy " + next.version() + " published"
        + (rulesChanged ? "; rules changed: detection restarts with them" : " (roles apply now)"));
    if (rulesChanged) {
      onNewRules.accept(policy);
    }
  }

  /** The problems, once while they stay the same: the running policy stays. */
  private void report(String what, List<String> problems) {
    if (!problems.equals(lastProblems)) {
      out.println("knockwatch: " + dir + what + "; policy " + current.version() + " stays:");
      problems.forEach(p -> out.println("  " + p));
      lastProblems = problems;
    }
  }

  /** Why detection cannot run {@code policy}: its topology, built as {@code streams} builds it, refused; or null. */
  static String whyDetectionCannotRun(Policy policy) {
    try {
      DetectionTopology.buildTopology(policy, AlertLifecycleProcessor.Clock.WALL);
      return null;
    } catch (RuntimeException e) {
      return e.getMessage() == null ? e.getClass().getName() : e.getMessage();
    }
  }

  /** The bytes of the files a policy is read from (rules.yaml, roles.yaml, *.rules.yaml), by name; null when unreadable. */
  static Map<String, byte[]> look(Path dir) {
    Map<String, byte[]> files = new java.util.TreeMap<>();
    try (java.util.stream.Stream<Path> list = java.nio.file.Files.list(dir)) {
      for (Path f : list.toList()) {
        String name = f.getFileName().toString();
        if ((name.equals(PolicyLoader.RULES_FILE) || name.equals(PolicyLoader.ROLES_FILE)
            || name.endsWith(PolicyLoader.MORE_RULES_SUFFIX)) && java.nio.file.Files.isRegularFile(f)) {
          files.put(name, java.nio.file.Files.readAllBytes(f));
        }
      }
    } catch (java.io.IOException | java.io.UncheckedIOException e) {
      return null; // looked at again, and parsed, next time
    }
    return files;
  }

  private static boolean sameBytes(Map<String, byte[]> a, Map<String, byte[]> b) {
    if (a == null || b == null || !a.keySet().equals(b.keySet())) {
      return false;
    }
    return a.entrySet().stream().allMatch(e -> java.util.Arrays.equals(e.getValue(), b.get(e.getKey())));
  }

  @Override
  public void close() {
    running = false;
  }
}
