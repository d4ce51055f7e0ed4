package dev.knockwatch.streams.detect;

import java.util.List;

/**
 * fs-guard's path patterns: {@code .bashrc} matches a file of that name in any directory,
 * {@code .git/hooks/} (trailing slash) anything below such a directory, {@code .git/config} that
 * path at the end of any directory; a leading {@code ~/} is dropped (the home directory differs
 * inside and outside the sandbox), so {@code ~/.ssh/} matches any {@code .ssh} directory.
 */
final class GuardedPaths {

  private GuardedPaths() {}

  /** The first pattern {@code path} matches, or null. */
  static String match(List<String> patterns, String path) {
    String p = path.replace('\\', '/');
    for (String pattern : patterns) {
      String g = pattern.startsWith("~/") ? pattern.substring(2) : pattern;
      if (g.endsWith("/")) {
        if (p.contains("/" + g) || p.startsWith(g) || (p + "/").endsWith("/" + g)) {
          return pattern;
        }
      } else if (p.endsWith("/" + g) || p.equals(g)) {
        return pattern;
      }
    }
    return null;
  }
}
