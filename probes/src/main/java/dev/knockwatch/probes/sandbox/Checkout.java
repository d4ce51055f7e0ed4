package dev.knockwatch.probes.sandbox;

import java.io.IOException;
import java.io.PrintStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** Where a file the probes ship beside the code lies: in the checkout the running classes come from. */
public final class Checkout {

  private Checkout() {}

  /**
   * The directory {@code relativeDir} (holding {@code file}) of this installation: {@code env}'s
   * value when that variable is set, else the one in the checkout the running classes come from
   * (or the working directory's).
   */
  public static Optional<Path> locate(String env, String relativeDir, String file) {
    String set = env == null ? null : System.getenv(env);
    if (set != null && !set.isBlank()) {
      return Optional.of(Path.of(set).toAbsolutePath());
    }
    List<Path> starts = new ArrayList<>();
    try {
      starts.add(Path.of(Checkout.class.getProtectionDomain().getCodeSource().getLocation().toURI()));
    } catch (URISyntaxException | SecurityException | NullPointerException e) {
      // no code source: the working directory is the only guess
    }
    starts.add(Path.of("").toAbsolutePath());
    for (Path start : starts) {
      for (Path p = start; p != null; p = p.getParent()) {
        if (Files.isRegularFile(p.resolve(relativeDir).resolve(file))) {
          return Optional.of(p.resolve(relativeDir));
        }
      }
    }
    return Optional.empty();
  }

  /**
   * A binary the probes pin through npm: {@code explicit} when given (empty when it is not
   * executable), else {@code binary} under {@code relativeDir} of this installation (located as
   * {@link #locate} does, by its {@code package-lock.json}), installed with {@code npm ci} first
   * when missing and {@code install}; {@code what} names it in what is said.
   */
  public static Optional<Path> pinnedBinary(Path explicit, String env, String relativeDir, String binary, String what,
      boolean install, PrintStream say) {
    if (explicit != null) {
      return Files.isExecutable(explicit) ? Optional.of(explicit) : Optional.empty();
    }
    Optional<Path> dir = locate(env, relativeDir, "package-lock.json");
    if (dir.isEmpty()) {
      return Optional.empty();
    }
    Path bin = dir.get().resolve(binary);
    if (!Files.isExecutable(bin) && install && Prerequisites.onPath("npm")) {
      say.println("knockwatch: installing " + what + " (npm ci in " + dir.get() + ")");
      try {
        Process p = new ProcessBuilder("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
            .directory(dir.get().toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) {
          say.println("knockwatch: npm ci failed: " + out.strip());
        }
      } catch (IOException e) {
        say.println("knockwatch: npm ci failed: " + e.getMessage());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    return Files.isExecutable(bin) ? Optional.of(bin) : Optional.empty();
  }
}
