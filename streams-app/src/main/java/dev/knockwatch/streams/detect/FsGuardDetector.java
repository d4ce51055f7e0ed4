package dev.knockwatch.streams.detect;

import dev.knockwatch.streams.rules.Detector;
import dev.knockwatch.streams.rules.Grain;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.rules.Rule;
import dev.knockwatch.events.config.Key;
import dev.knockwatch.events.config.KeyValues;
import java.util.List;

/**
 * {@code fs-guard}: a refused write (or other access) of a guarded path: shell start-up files, git hooks,
 * agent settings.
 */
public final class FsGuardDetector implements Detector<FsGuardDetector.Settings> {

  /** What fs-guard watches when a rule gives no {@code paths}. */
  public static final List<String> DEFAULT_PATHS = List.of(
      ".bashrc", ".bash_profile", ".zshrc", ".zprofile", ".profile", ".gitconfig", ".gitmodules",
      ".git/hooks/", ".git/config", ".ripgreprc", ".mcp.json", ".vscode/", ".idea/", ".claude/commands/",
      ".claude/agents/", "~/.ssh/", "~/.aws/credentials", ".env");

  static final Key<List<String>> PATHS = Key.strings("paths", "list of path patterns", DEFAULT_PATHS,
      "shell start-up files, git hooks and config, editor and agent settings, `~/.ssh/`, `~/.aws/credentials`, `.env`",
      "the guarded paths: a name matches in any directory, a trailing `/` guards a directory, `~/` is the home");

  public record Settings(List<String> paths) implements Detector.Settings {}

  @Override
  public Spec spec() {
    return Spec.of("fs-guard", "a refused access to a guarded path (either path of a rename or link)", PATHS,
        Grain.PER);
  }

  @Override
  public Settings settings(KeyValues v) {
    return new Settings(v.get(PATHS));
  }

  /** Either path a call names (rename's, link's and symlink's second is {@code newPath}) may be the guarded one. */
  @Override
  public Finding judge(Rule rule, Settings s, Seen seen) {
    ViolationEvent e = seen.event();
    if (e.kind() != Kind.FILESYSTEM) {
      return null;
    }
    for (String path : new String[] {e.path(), e.newPath()}) {
      String hit = path == null ? null : GuardedPaths.match(s.paths(), path);
      if (hit != null) {
        return new Finding("refused " + (e.action() == null ? "access" : e.action()) + " on " + path
            + " (guarded: " + hit + ")", path);
      }
    }
    return null;
  }
}
