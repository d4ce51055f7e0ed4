package dev.knockwatch.streams.rules;

/** The rules directory is not usable; the message names the file and the exact problem. */
public final class RulesException extends RuntimeException {
  public RulesException(String message) {
    super(message);
  }
}
