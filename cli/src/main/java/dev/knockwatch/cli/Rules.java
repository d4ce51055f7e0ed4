package dev.knockwatch.cli;

import dev.knockwatch.notify.config.ReceiversConfig;
import dev.knockwatch.streams.count.ThresholdCrossingProcessor;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.PolicyLoader;
import dev.knockwatch.streams.rules.Rule;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Collectors;

/** Loads the alert-rules directory for {@code up} and {@code replay}. */
public final class Rules {

  private Rules() {}

  public static Policy load(Path dir) {
    if (!Files.isDirectory(dir)) {
      throw new UsageException("rules directory " + dir + " does not exist");
    }
    return PolicyLoader.load(dir);
  }

  /** One line per receiver: {@code soc-slack (slack), oncall (pagerduty)}. */
  static String describe(ReceiversConfig receivers) {
    return receivers.summary().entrySet().stream().map(e -> e.getKey() + " (" + e.getValue() + ")")
        .collect(Collectors.joining(", "));
  }

  /** One line: each rule and what it does, e.g. {@code persistent-retry: count 5 in any 5m -> warning}. */
  static String describe(Policy policy) {
    return policy.rules().stream().map(Rules::describe).collect(Collectors.joining("; "))
        + "; policy " + policy.version();
  }

  private static String describe(Rule r) {
    String what = switch (r.detector()) {
      case COUNT -> "count " + r.threshold() + " in " + (r.hop() == null ? "any " + ThresholdCrossingProcessor.human(r.window())
          : ThresholdCrossingProcessor.human(r.window()) + " windows every " + ThresholdCrossingProcessor.human(r.hop()));
      case BYPASS -> "bypass within " + ThresholdCrossingProcessor.human(r.within());
      default -> r.detector().wireName();
    };
    return r.id() + ": " + what + " -> " + r.severity().name().toLowerCase() + (r.shadow() ? " (shadow)" : "");
  }
}
