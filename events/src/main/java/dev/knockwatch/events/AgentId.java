package dev.knockwatch.events;

import java.util.Optional;

/**
 * The id of an agent: the directory the sandbox harness writes its logs in (docs/TRUST.md).
 * 1 to 128 characters of {@code [A-Za-z0-9._:-]}, starting with a letter or digit: never a path
 * ({@code ../x}), never markup ({@code <script>}). Roles are chosen by it (roles.yaml).
 */
public final class AgentId {

  public static final int MAX_LENGTH = 128;

  private AgentId() {}

  /** Why {@code candidate} is not a valid agent id, or empty when it is one. */
  public static Optional<String> problem(String candidate) {
    if (candidate == null || candidate.isEmpty()) {
      return Optional.of("agentId is missing");
    }
    if (candidate.length() > MAX_LENGTH) {
      return Optional.of("agentId is too long: " + candidate.length() + " characters, at most " + MAX_LENGTH
          + " allowed");
    }
    if (!Character.isLetterOrDigit(candidate.charAt(0)) || candidate.charAt(0) > 'z') {
      return Optional.of("agentId must start with a letter or digit, not U+"
          + String.format("%04X", (int) candidate.charAt(0)));
    }
    for (int i = 0; i < candidate.length(); i++) {
      char c = candidate.charAt(i);
      if (!CommandId.isIdChar(c)) {
        return Optional.of("agentId has a character outside [A-Za-z0-9._:-] at position " + (i + 1) + ": U+"
            + String.format("%04X", (int) c));
      }
    }
    return Optional.empty();
  }

  public static boolean isValid(String candidate) {
    return problem(candidate).isEmpty();
  }
}
