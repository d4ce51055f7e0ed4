package dev.knockwatch.cli;

import dev.knockwatch.cli.run.UsageException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Base64;

/**
 * The query API's bearer token: from a file, else from {@code KNOCKWATCH_API_TOKEN}, else
 * generated (32 random bytes, base64url), in which case — and only then — {@code up} prints it
 * once so the operator can use it. A given token is never printed.
 */
record ApiToken(String value, String source) {

  static ApiToken resolve(Path file, String env) {
    if (file != null) {
      String t = dev.knockwatch.cli.run.FileOption.read("--api-token-file", file);
      if (t.length() < 16) {
        throw new UsageException("--api-token-file " + file + ": the token needs at least 16 characters");
      }
      return new ApiToken(t, "from " + file);
    }
    if (env != null && !env.isBlank()) {
      if (env.strip().length() < 16) {
        throw new UsageException("KNOCKWATCH_API_TOKEN needs at least 16 characters");
      }
      return new ApiToken(env.strip(), "from KNOCKWATCH_API_TOKEN");
    }
    byte[] b = new byte[32];
    new SecureRandom().nextBytes(b);
    return new ApiToken(Base64.getUrlEncoder().withoutPadding().encodeToString(b), "generated");
  }

  /** For the banner: where the token came from, and the token itself only when it was generated. */
  String describe() {
    return "generated".equals(source) ? "(generated for this run, set KNOCKWATCH_API_TOKEN to choose one): " + value
        : source;
  }

  @Override
  public String toString() {
    return "ApiToken[" + source + "]";
  }
}
