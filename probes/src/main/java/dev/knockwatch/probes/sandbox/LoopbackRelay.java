package dev.knockwatch.probes.sandbox;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Ports of this network namespace, reached from inside the {@link NetworkGuard}'s (which holds
 * only its own {@code lo}) at the same numbers on 127.0.0.1: for each, a {@code socat} here
 * listens on a Unix socket (mode 600, in {@code dir}, or in a private temporary directory where
 * {@code dir}'s path is too long for a socket's) and connects to the port, and
 * {@link #wrap} starts its twin inside, listening on the port and connecting to the socket. What
 * runs inside reaches these ports and nothing else: a model stand-in, knockwatch's OTLP endpoint.
 */
public final class LoopbackRelay implements AutoCloseable {

  private final List<Integer> ports;
  private final List<Path> sockets = new ArrayList<>();
  private final List<Process> relays = new ArrayList<>();

  /** A Unix socket's path holds at most 107 bytes: a deep {@code dir} gets a short private one instead. */
  static final int MAX_SOCKET_PATH = 100;

  private final Path made;

  public LoopbackRelay(Path dir, List<Integer> ports) throws IOException, InterruptedException {
    this.ports = List.copyOf(ports);
    Files.createDirectories(dir);
    this.made = dir.toAbsolutePath().toString().length() + "/relay-65535.sock".length() > MAX_SOCKET_PATH
        ? Files.createTempDirectory("kw-relay-", java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
            java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"))) : null;
    dir = made != null ? made : dir;
    try {
      for (int port : ports) {
        Path socket = dir.resolve("relay-" + port + ".sock");
        Files.deleteIfExists(socket);
        sockets.add(socket);
        relays.add(new ProcessBuilder("socat", "UNIX-LISTEN:" + socket + ",fork,mode=600", "TCP:127.0.0.1:" + port)
            .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start());
      }
      for (Path socket : sockets) {
        for (int i = 0; i < 100 && !Files.exists(socket); i++) {
          Thread.sleep(20);
        }
      }
    } catch (IOException | InterruptedException | RuntimeException e) {
      close();
      throw e;
    }
  }

  /**
   * {@code command} inside the guard, with the relays' inside ends up first: it starts once each
   * port answers on the namespace's 127.0.0.1, and the relays end with it (its exit status kept).
   */
  public List<String> wrap(List<String> command) {
    StringBuilder inside = new StringBuilder();
    for (int i = 0; i < ports.size(); i++) {
      int port = ports.get(i);
      inside.append("socat TCP-LISTEN:").append(port).append(",bind=127.0.0.1,reuseaddr,fork UNIX-CONNECT:")
          .append(sockets.get(i)).append(" & pids=\"$pids $!\"; i=0; while ! (exec 3<>/dev/tcp/127.0.0.1/")
          .append(port).append(") 2>/dev/null && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done; ");
    }
    inside.append("\"$@\"; rc=$?; kill $pids 2>/dev/null; exit $rc");
    List<String> argv = new ArrayList<>(List.of("bash", "-c", inside.toString(), "knockwatch-relay"));
    argv.addAll(command);
    return NetworkGuard.wrap(argv);
  }

  @Override
  public void close() throws InterruptedException {
    for (Process p : relays) {
      p.destroy();
      p.waitFor(5, TimeUnit.SECONDS);
    }
    for (Path s : sockets) {
      try {
        Files.deleteIfExists(s);
      } catch (IOException e) {
        // a socket left in a private directory
      }
    }
    if (made != null) {
      try {
        Files.deleteIfExists(made);
      } catch (IOException e) {
        // an empty private directory left behind
      }
    }
  }
}
