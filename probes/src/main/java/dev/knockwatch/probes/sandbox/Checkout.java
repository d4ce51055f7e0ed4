package dev.knockwatch.probes.sandbox;

import java.net.URISyntaxException;
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
}
