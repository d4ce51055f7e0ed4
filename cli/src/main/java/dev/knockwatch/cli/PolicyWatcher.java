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

  @Override
  public void close() {
    running = false;
  }
}
