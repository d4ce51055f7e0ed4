package dev.knockwatch.probes.guard;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * The probes' own home directory, made fresh before every probe: {@code home/} is the sandboxed
 * command's HOME (holding a canary {@code .ssh/id_ed25519} that is no real key), {@code home/work}
 * its working directory with a {@code .git/hooks/pre-commit}. Nothing of the real user's home is
 * ever touched, and a forbidden write leaves a trace here that the probe checks.
 */
public final class ProbeWorkspace {

  public static final String CANARY_KEY = "knockwatch canary key: not a real key\n";
  static final String HOOK = "#!/bin/sh\n";
  static final String TOUCHED = "knockwatch-probe";

  private final Path base;

  public ProbeWorkspace(Path base) {
    this.base = base.toAbsolutePath();
  }

  public Path home() {
    return base.resolve("home");
  }

  public Path work() {
    return home().resolve("work");
  }

  public Path settings() {
    return base.resolve("srt-settings.json");
  }

  /** Puts every file back as a probe expects to find it. */
  public void reset() {
    try {
      Files.createDirectories(work().resolve(".git/hooks"));
      Path ssh = Files.createDirectories(home().resolve(".ssh"));
      Files.writeString(ssh.resolve("id_ed25519"), CANARY_KEY);
      Files.setPosixFilePermissions(ssh.resolve("id_ed25519"), PosixFilePermissions.fromString("rw-------"));
      Files.writeString(work().resolve(".git/hooks/pre-commit"), HOOK);
      Files.deleteIfExists(home().resolve(TOUCHED));
      Files.deleteIfExists(work().resolve(".env"));
      Files.deleteIfExists(work().resolve(TOUCHED + ".sock"));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot prepare the probe workspace " + base, e);
    }
  }

  boolean exists(String relativeToHome) {
    return Files.exists(home().resolve(relativeToHome));
  }

  String read(String relativeToHome) {
    try {
      Path p = home().resolve(relativeToHome);
      return Files.exists(p) ? Files.readString(p) : "";
    } catch (IOException e) {
      return "";
    }
  }
}
