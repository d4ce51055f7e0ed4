package dev.knockwatch.probes.sandbox;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The network guard every probe runs behind: a fresh network namespace ({@code unshare --net})
 * holding only {@code lo}, brought up, and checked to hold nothing else before the probe's
 * command is exec'd. Nothing a probe does can leave the machine, even if the sandbox under test
 * lets it through. When the guard cannot be set up the probe does not run.
 */
public final class NetworkGuard {

  /** Exit statuses of the guard itself, distinct from any command's. */
  static final int CANNOT_BRING_LO_UP = 90;
  static final int NOT_ONLY_LO = 91;

  // $links is the interface list of the new namespace, one name a line; it must be exactly "lo"
  static final String SCRIPT = String.join("\n",
      "ip link set lo up 2>/dev/null || { echo 'knockwatch network guard: cannot bring lo up in the new namespace' >&2; exit "
          + CANNOT_BRING_LO_UP + "; }",
      "links=$(ip -o link show | awk -F': ' '{print $2}')",
      "if [ \"$links\" != lo ] || ! ip -o link show up | grep -q ': lo:'; then",
      "  echo \"knockwatch network guard: the namespace must hold only lo (up), found: $(echo $links)\" >&2; exit "
          + NOT_ONLY_LO,
      "fi",
      "exec \"$@\"");

  private NetworkGuard() {}

  /** {@code command}, to be run inside a fresh namespace holding only {@code lo}. */
  public static List<String> wrap(List<String> command) {
    List<String> argv = new ArrayList<>(List.of("unshare", "--net", "--", "sh", "-c", SCRIPT, "knockwatch-network-guard"));
    argv.addAll(command);
    return argv;
  }

  /**
   * Sets the guard up once with nothing in it: empty when it works, else why not (not root and no
   * user namespaces, {@code unshare} or {@code ip} missing ...).
   */
  public static Optional<String> check() {
    for (String tool : List.of("unshare", "ip", "awk")) {
      if (!Prerequisites.onPath(tool)) {
        return Optional.of("the network guard needs `" + tool + "` (Debian: "
            + (tool.equals("ip") ? "iproute2" : tool.equals("awk") ? "mawk" : "util-linux") + ")");
      }
    }
    try {
      Process p = new ProcessBuilder(wrap(List.of("true"))).redirectErrorStream(true).start();
      p.getOutputStream().close();
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return Optional.of("the network guard did not come up within 30 s");
      }
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
      return p.exitValue() == 0 ? Optional.empty()
          : Optional.of("cannot set up the network guard (unshare --net, only lo): "
              + (out.isEmpty() ? "exit " + p.exitValue() : out));
    } catch (IOException e) {
      return Optional.of("cannot set up the network guard: " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Optional.of("interrupted while setting up the network guard");
    }
  }
}
