package dev.knockwatch.events.config;

import java.util.List;

/**
 * A configuration file cannot be used — the alert rules and roles, the receivers, the ingest
 * sources: every problem found, one per line, each as {@code FILE:LINE: problem} where its reader
 * knows the line. The one type every config reader throws, so a command says them all alike.
 */
public final class ConfigException extends RuntimeException {

  private final List<String> problems;

  public ConfigException(List<String> problems) {
    super(String.join("\n", problems));
    this.problems = List.copyOf(problems);
  }

  public ConfigException(String problem) {
    this(List.of(problem));
  }

  public List<String> problems() {
    return problems;
  }
}
