package dev.knockwatch.probes.sandbox;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What the real sandbox needs on this machine: bubblewrap, socat and ripgrep (srt will not start
 * without them), Node and npm for the bridge, curl for the network probes, unshare and ip for the
 * network guard (strace only when a bridge run asks for it: not checked here). Missing tools
 * are installed with apt-get when we are root; otherwise the exception says exactly what to
 * install.
 */
public final class Prerequisites {

  /** Command on PATH -> the Debian package that brings it. */
  static final Map<String, String> TOOLS = new LinkedHashMap<>();

  static {
    TOOLS.put("bwrap", "bubblewrap");
    TOOLS.put("socat", "socat");
    TOOLS.put("rg", "ripgrep");
    TOOLS.put("node", "nodejs");
    TOOLS.put("npm", "npm");
    TOOLS.put("curl", "curl");
    TOOLS.put("unshare", "util-linux");
    TOOLS.put("ip", "iproute2");
  }

  private Prerequisites() {}

  /** The Debian packages of the tools not on PATH, in a stable order. */
  public static List<String> missingPackages() {
    List<String> missing = new ArrayList<>();
    TOOLS.forEach((tool, pkg) -> {
      if (!onPath(tool) && !missing.contains(pkg)) {
        missing.add(pkg);
      }
    });
    return missing;
  }

  /**
   * Makes sure every tool is there: installs the missing ones when root and apt-get exist.
   *
   * @throws IllegalStateException naming the packages to install, when they cannot be installed here
   */
  public static void ensure(java.io.PrintStream say) {
    List<String> missing = missingPackages();
    if (missing.isEmpty()) {
      return;
    }
    boolean root = "root".equals(System.getProperty("user.name"));
    if (!root || !onPath("apt-get")) {
      throw new IllegalStateException("the real sandbox needs " + String.join(", ", missing)
          + "; install them (Debian: sudo apt-get install " + String.join(" ", missing) + ")");
    }
    say.println("knockwatch: installing " + String.join(" ", missing) + " (the real sandbox needs them)");
    List<String> cmd = new ArrayList<>(List.of("apt-get", "install", "-y", "-q"));
    cmd.addAll(missing);
    if (run(cmd) != 0 && (run(List.of("apt-get", "update", "-q")) != 0 || run(cmd) != 0)) {
      throw new IllegalStateException("apt-get could not install " + String.join(" ", missing)
          + "; install them by hand (sudo apt-get install " + String.join(" ", missing) + ")");
    }
  }

  public static boolean onPath(String tool) {
    String path = System.getenv("PATH");
    if (path == null) {
      return false;
    }
    for (String dir : path.split(File.pathSeparator)) {
      Path p = Path.of(dir.isEmpty() ? "." : dir, tool);
      if (Files.isExecutable(p) && !Files.isDirectory(p)) {
        return true;
      }
    }
    return false;
  }

  private static int run(List<String> cmd) {
    try {
      ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.DISCARD);
      pb.environment().put("DEBIAN_FRONTEND", "noninteractive");
      Process p = pb.start();
      if (!p.waitFor(15, TimeUnit.MINUTES)) {
        p.destroyForcibly();
        return -1;
      }
      return p.exitValue();
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }
}
