package dev.knockwatch.cli;

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

/**
 * {@code up}'s eye on the alert-rules directory: when the files change and still load, the new
 * policy is published to {@code knockwatch.policy} (roles apply at once on every instance) and,
 * when the rules themselves changed, detection restarts with them. Files that do not load are
 * reported once, with every problem, and the running policy stays.
 */
final class PolicyWatcher implements Runnable, AutoCloseable {

  private final Path dir;
  private final String bootstrapServers;
  private final Map<String, Object> clientProps;
  private final Consumer<dev.knockwatch.streams.rules.Policy> onNewRules;
  private final PrintStream out;
  private final Duration every;
  private volatile boolean running = true;
  private PolicyFiles current;
  private List<String> lastProblems = List.of();
  /** The files' bytes at the last look: unchanged bytes are not parsed again. */
  private Map<String, byte[]> lastSeen;

  PolicyWatcher(Path dir, String bootstrapServers, Map<String, Object> clientProps, PolicyFiles current,
      Consumer<dev.knockwatch.streams.rules.Policy> onNewRules, PrintStream out, Duration every) {
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
      if (!problems.equals(lastProblems)) {
        out.println("knockwatch: " + dir + " changed but does not load; policy " + current.version() + " stays:");
        problems.forEach(p -> out.println("  " + p));
        lastProblems = problems;
      }
      return;
    }
    lastProblems = List.of();
    PolicyFiles next = PolicyLoader.files(dir);
    if (next.version().equals(current.version())) {
      return;
    }
    PolicyPublisher.publish(bootstrapServers, clientProps, next);
    boolean rulesChanged = !Objects.equals(next.rules(), current.rules())
        || !Objects.equals(next.moreRules(), current.moreRules());
    current = next;
    out.println("knockwatch: policy " + next.version() + " published"
        + (rulesChanged ? "; rules changed: detection restarts with them" : " (roles apply now)"));
    if (rulesChanged) {
      onNewRules.accept(PolicyLoader.load(next, dir.toString()));
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
