package dev.knockwatch.testkit;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * rsyslog or syslog-ng as a user runs it with knockwatch's shipped configuration
 * ({@code config/shippers/}): Debian's packages, unpacked by {@code bench/syslogs.sh} (which
 * {@code ./knockwatch test} runs) into {@code KNOCKWATCH_SYSLOGS}, else the launcher's cache. Run
 * from a module's directory: the configurations are read from {@code ../config/shippers/}.
 */
public final class RealShipper implements AutoCloseable {

  public enum Kind { RSYSLOG, SYSLOG_NG }

  /** Where the packages are unpacked; a test fails, saying how to get them, where they are not. */
  public static Path unpacked() {
    String env = System.getenv("KNOCKWATCH_SYSLOGS");
    Path root = env != null && !env.isBlank() ? Path.of(env)
        : Path.of(System.getProperty("user.home"), ".cache", "knockwatch", "syslogs");
    if (!Files.isExecutable(root.resolve("usr/sbin/rsyslogd")) || !Files.isExecutable(root.resolve("usr/sbin/syslog-ng"))) {
      throw new IllegalStateException("rsyslog and syslog-ng are not unpacked in " + root
          + ": `./knockwatch test` unpacks them (bench/syslogs.sh DIR, as root), or set KNOCKWATCH_SYSLOGS");
    }
    return root;
  }

  private final Kind kind;
  private final Path dir;
  private final Map<String, String> env;
  private Process process;

  private RealShipper(Kind kind, Path dir, Map<String, String> env) {
    this.kind = kind;
    this.dir = dir;
    this.env = env;
  }

  /** Starts {@code kind} on the layout under {@code logs}, shipping to {@code topic}; its state under {@code dir}. */
  public static RealShipper start(Kind kind, Path logs, Path dir, String bootstrapServers, String topic) throws IOException {
    Files.createDirectories(dir.resolve("work"));
    RealShipper s = new RealShipper(kind, dir, Map.of("KNOCKWATCH_LOGS", logs.toAbsolutePath().toString(),
        "KNOCKWATCH_BOOTSTRAP_SERVERS", bootstrapServers, "KNOCKWATCH_RAW_TOPIC", topic,
        "KNOCKWATCH_RSYSLOG_WORK", dir.resolve("work").toAbsolutePath().toString()));
    s.process = s.launch();
    return s;
  }

  private Process launch() throws IOException {
    Path root = unpacked();
    Path config = Path.of("..", "config", "shippers", kind == Kind.RSYSLOG ? "rsyslog.conf" : "syslog-ng.conf")
        .toAbsolutePath().normalize();
    List<String> command = kind == Kind.RSYSLOG
        ? List.of(root.resolve("usr/sbin/rsyslogd").toString(), "-n", "-iNONE", "-f", config.toString(),
            "-M", root.resolve("usr/lib/x86_64-linux-gnu/rsyslog").toString())
        : List.of(root.resolve("usr/sbin/syslog-ng").toString(), "-F", "--no-caps", "-f", config.toString(),
            "--module-path=" + root.resolve("usr/lib/syslog-ng/3.38"), "-R", dir.resolve("work/persist").toString(),
            "-p", dir.resolve("work/pid").toString(), "-c", dir.resolve("work/ctl").toString());
    ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("out").toFile()));
    pb.environment().putAll(env);
    pb.environment().put("LD_LIBRARY_PATH", String.join(":", root.resolve("usr/lib/x86_64-linux-gnu").toString(),
        root.resolve("lib/x86_64-linux-gnu").toString(), root.resolve("usr/lib/syslog-ng").toString()));
    return pb.start();
  }

  /** kill -9, as a crash or the OOM killer ends it. */
  public void kill9() throws InterruptedException {
    process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
  }

  /** Starts it again on the same state (positions) and configuration. */
  public void restart() throws IOException {
    process = launch();
  }

  public boolean alive() {
    return process.isAlive();
  }

  /** What it said (for a failing test's message). */
  public String output() throws IOException {
    Path out = dir.resolve("out");
    return Files.exists(out) ? Files.readString(out) : "";
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }
  }
}
