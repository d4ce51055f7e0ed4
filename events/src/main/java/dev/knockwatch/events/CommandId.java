package dev.knockwatch.events;

import java.security.SecureRandom;
import java.util.Base64;
import java.util.Optional;

/**
 * The key of everything in knockwatch: the id of one sandboxed command.
 *
 * <p>srt uses 22-character base64url ids; other sandboxes may use longer ones. An id shorter
 * than 22 characters is too easy to collide or guess, and one longer than 128 characters or
 * outside {@code [A-Za-z0-9._:-]} is not an id but attacker-chosen text.
 */
public record CommandId(String value) {

  public static final int MIN_LENGTH = 22;
  public static final int MAX_LENGTH = 128;
  private static final SecureRandom RANDOM = new SecureRandom();

  public CommandId {
    problem(value).ifPresent(reason -> {
      throw new InvalidCommandIdException(reason);
    });
  }

  /** A new unguessable id in srt's own shape: 16 random bytes, 22 characters of base64url. */
  public static String random() {
    byte[] b = new byte[16];
    RANDOM.nextBytes(b);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
  }

  /** Why {@code candidate} is not a valid command id, or empty when it is one. */
  public static Optional<String> problem(String candidate) {
    if (candidate == null || candidate.isEmpty()) {
      return Optional.of("commandId is missing");
    }
    if (candidate.length() < MIN_LENGTH) {
      return Optional.of("commandId is too short: " + candidate.length()
          + " characters, at least " + MIN_LENGTH + " required");
    }
    if (candidate.length() > MAX_LENGTH) {
      return Optional.of("commandId is too long: " + candidate.length()
          + " characters, at most " + MAX_LENGTH + " allowed");
    }
    for (int i = 0; i < candidate.length(); i++) {
      char c = candidate.charAt(i);
      if (!isIdChar(c)) {
        return Optional.of("commandId has a character outside [A-Za-z0-9._:-] at position "
            + (i + 1) + ": U+" + String.format("%04X", (int) c));
      }
    }
    return Optional.empty();
  }

  public static boolean isValid(String candidate) {
    return problem(candidate).isEmpty();
  }

  static boolean isIdChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
        || c == '.' || c == '_' || c == ':' || c == '-';
  }

  @Override
  public String toString() {
    return value;
  }

  /** A command id that fails validation; the message is the reason, fit for the rejected topic. */
  public static final class InvalidCommandIdException extends IllegalArgumentException {
    public InvalidCommandIdException(String reason) {
      super(reason);
    }
  }
}
