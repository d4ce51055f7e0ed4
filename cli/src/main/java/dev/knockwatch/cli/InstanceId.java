package dev.knockwatch.cli;

import dev.knockwatch.events.CommandId;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.regex.Pattern;

/**
 * This installation's static consumer-group member id ({@code group.instance.id}), kept in
 * {@code <var>/instance-id}: made once, read back on every start. A process killed with
 * {@code kill -9} leaves its members in their groups until their sessions time out (45 s); a
 * restart that rejoins with the same static id takes their place at once, with no rebalance.
 * Two processes on one {@code --var} are impossible anyway (the broker and the state stores lock
 * it), and two installations never share a file, so no two live members share an id.
 */
final class InstanceId {

  static final String FILE = "instance-id";
  private static final Pattern SHAPE = Pattern.compile("[A-Za-z0-9_-]{16,64}");

  private InstanceId() {}

  /** The id kept under {@code var}; a missing or damaged file is replaced by a new id. */
  static String of(Path var) {
    Path file = var.resolve(FILE);
    try {
      if (Files.isRegularFile(file)) {
        String kept = Files.readString(file, StandardCharsets.UTF_8).strip();
        if (SHAPE.matcher(kept).matches()) {
          return kept;
        }
      }
      String id = CommandId.random();
      Files.createDirectories(var);
      Path part = var.resolve(FILE + ".new");
      Files.writeString(part, id + "\n", StandardCharsets.UTF_8);
      Files.move(part, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      return id;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot keep the instance id in " + file, e);
    }
  }
}
