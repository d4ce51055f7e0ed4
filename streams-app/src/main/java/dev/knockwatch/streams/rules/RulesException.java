package dev.knockwatch.streams.rules;

import java.util.List;

/** The alert-rules directory cannot be used: every problem found, one per line ({@code file:line: problem}). */
public final class RulesException extends RuntimeException {

  private final List<String> problems;

  public RulesException(List<String> problems) {
    super(String.join("\n", problems));
    this.problems = List.copyOf(problems);
  }

  public RulesException(String problem) {
    this(List.of(problem));
  }

  public List<String> problems() {
    return problems;
  }
}
