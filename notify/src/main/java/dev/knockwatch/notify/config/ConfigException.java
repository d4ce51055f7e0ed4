package dev.knockwatch.notify.config;

import java.util.List;

/** receivers.yaml does not load: every problem found, one per line. */
public final class ConfigException extends RuntimeException {

  private final List<String> problems;

  public ConfigException(List<String> problems) {
    super(String.join("\n", problems));
    this.problems = List.copyOf(problems);
  }

  public List<String> problems() {
    return problems;
  }
}
