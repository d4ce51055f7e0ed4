package dev.knockwatch.streams.detect;

import dev.knockwatch.events.FsPaths;
import java.util.List;

/**
 * fs-guard's path patterns: {@code .bashrc} matches a file of that name in any directory,
 * {@code .git/hooks/} (trailing slash) anything below such a directory, {@code .git/config} that
 * path at the end of any directory, relative or absolute; a leading {@code ~/} is dropped (the home directory differs
 * inside and outside the sandbox), so {@code ~/.ssh/} matches any {@code .ssh} directory.
 */
final class GuardedPaths {

  private GuardedPaths() {}

  /**
   * The first pattern {@code path} matches, or null. The path is normalised first ({@code .},
   * {@code ..}, {@code //}), whatever its parser did; a guarded directory matches itself (creating
   * it is a guarded write) and anything below it.
   */
  static String match(List<String> patterns, String path) {
    String p = "/" + FsPaths.normalise(path.replace('\\', '/'), null);
    for (String pattern : patterns) {
      String g = "/" + (pattern.startsWith("~/") ? pattern.substring(2) : pattern);
      if (g.endsWith("/") ? (p + "/").contains(g) : p.endsWith(g)) {
        return pattern;
      }
    }
    return null;
  }
}
