package dev.knockwatch.cli.run;

/** A mistake in what the user asked for: printed as one line, exit code 2, no stack trace. */
public final class UsageException extends RuntimeException {
  public UsageException(String message) {
    super(message);
  }
}
