package dev.knockwatch.events;

import java.nio.file.InvalidPathException;
import java.nio.file.Path;

/**
 * A filesystem path as a guard compares it: {@code .}, {@code ..} and repeated slashes taken out
 * (lexically, as {@link Path#normalize} does: nothing is resolved on this machine, whose files are
 * not the sandbox's), and a relative path joined to the directory the call named, where the log
 * says it (strace {@code -y}: {@code AT_FDCWD</w>}). The agent spells its paths: {@code
 * /w/.git/./config}, {@code .git//hooks/x} and {@code a/../.bashrc} must meet the same guard as
 * the plain spelling.
 */
public final class FsPaths {

  private FsPaths() {}

  /**
   * {@code path} normalised, joined to {@code dir} (absolute, or null when unknown) when it is
   * relative; a relative path with no directory stays relative ({@code ../x} keeps its {@code ..}).
   * A path the JDK cannot read (a NUL byte) is returned as it is.
   */
  public static String normalise(String path, String dir) {
    if (path == null || path.isEmpty()) {
      return path;
    }
    try {
      Path p = Path.of(path);
      if (!p.isAbsolute() && dir != null && dir.startsWith("/")) {
        p = Path.of(dir).resolve(p);
      }
      String n = p.normalize().toString();
      return n.isEmpty() ? "." : n;
    } catch (InvalidPathException e) {
      return path;
    }
  }
}
