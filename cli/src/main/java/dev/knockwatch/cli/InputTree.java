package dev.knockwatch.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.Predicate;

/**
 * What to tail for a file or folder named on the command line: a folder is read whole; a single
 * file is read from its grandparent, so it keeps its {@code <agentId>/} directory in its name.
 */
record InputTree(Path root, Predicate<Path> only) {

  static InputTree of(Path input) {
    Path abs = input.toAbsolutePath().normalize();
    if (Files.isDirectory(abs)) {
      return new InputTree(abs, p -> true);
    }
    Path parent = abs.getParent();
    return new InputTree(parent.getParent() != null ? parent.getParent() : parent,
        p -> p.toAbsolutePath().normalize().equals(abs));
  }
}
