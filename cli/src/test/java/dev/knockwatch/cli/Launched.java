package dev.knockwatch.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Topics;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * {@code ./knockwatch ...} run the way a user runs it: the launcher script of a checkout, in its
 * own process, from the checkout's directory; its stdout and stderr kept in files, read as they
 * grow. For the tests of what the README promises.
 */
final class Launched implements AutoCloseable {

  /** The checkout these tests run in (Maven runs a module's tests in the module's directory). */
  static final Path REPO = Path.of("").toAbsolutePath().getParent();
  static final Path JAR = Path.of("cli/target/knockwatch.jar");

  private final Process process;
  private final Path out;
  private final Path err;

  private Launched(Process process, Path out, Path err) {
    this.process = process;
    this.out = out;
    this.err = err;
  }

  /**
   * A copy of the repository in {@code target}, as a fresh clone with its jar built would be: the
   * sources and the launcher, the built {@code knockwatch.jar} (newer than every source, so the
   * launcher does not rebuild it), the srt bridge's installed library when there is one (linked),
   * and no {@code var/}, no {@code .git}, no other build output.
   */
  static Path copyOfRepository(Path target) throws IOException {
    Path jar = REPO.resolve(JAR);
    if (!Files.isRegularFile(jar)) {
      throw new IllegalStateException(jar + " is missing: the cli module builds it before its integration tests");
    }
    Set<String> skipped = Set.of(".git", "var", "target", "node_modules");
    Files.walkFileTree(REPO, new SimpleFileVisitor<>() {
      @Override
      public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) throws IOException {
        if (!dir.equals(REPO) && skipped.contains(dir.getFileName().toString())) {
          return FileVisitResult.SKIP_SUBTREE;
        }
        Files.createDirectories(target.resolve(REPO.relativize(dir).toString()));
        return FileVisitResult.CONTINUE;
      }

      @Override
      public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
        Files.copy(file, target.resolve(REPO.relativize(file).toString()), StandardCopyOption.COPY_ATTRIBUTES);
        return FileVisitResult.CONTINUE;
      }
    });
    Path copiedJar = target.resolve(JAR.toString());
    Files.createDirectories(copiedJar.getParent());
    try {
      Files.createLink(copiedJar, jar); // 130 MB not copied for each test; the launcher only reads it
    } catch (IOException | UnsupportedOperationException e) {
      Files.copy(jar, copiedJar);
    }
    Files.setLastModifiedTime(copiedJar, FileTime.from(Instant.now()));
    for (String installed : List.of("probes/srt-bridge/node_modules", "probes/claude-code/node_modules",
        "probes/codex/node_modules")) {
      Path library = REPO.resolve(installed);
      if (Files.isDirectory(library)) {
        Files.createSymbolicLink(target.resolve(installed), library);
      }
    }
    return target;
  }

  /** Runs {@code ./knockwatch args...} in {@code checkout}, with {@code env} added to this process's environment. */
  static Launched start(Path checkout, Path outputDir, Map<String, String> env, String... args) throws IOException {
    Files.createDirectories(outputDir);
    List<String> command = new ArrayList<>(List.of("./knockwatch"));
    command.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(command).directory(checkout.toFile());
    pb.environment().remove("KNOCKWATCH_API_TOKEN");
    pb.environment().putAll(env);
    Path out = outputDir.resolve("stdout.txt");
    Path err = outputDir.resolve("stderr.txt");
    return new Launched(pb.redirectOutput(out.toFile()).redirectError(err.toFile()).start(), out, err);
  }

  /** Runs {@code ./knockwatch bench ... --json} in a copy of the repository under {@code dir}: its JSON line. */
  static JsonNode benchJsonInACopy(Path dir, String... args) throws Exception {
    return benchJson(copyOfRepository(dir.resolve("checkout")), dir.resolve("run"), args);
  }

  /** Runs {@code ./knockwatch bench ... --json} in {@code checkout} to its end: the JSON line it printed last. */
  static JsonNode benchJson(Path checkout, Path outputDir, String... args) throws Exception {
    try (Launched bench = start(checkout, outputDir, Map.of(), args)) {
      int status = bench.awaitExit(Duration.ofMinutes(5));
      if (status != 0) {
        throw new AssertionError("exit " + status + "\nstderr (last 60 lines):\n" + tail(bench.err(), 60));
      }
      String json = bench.out().lines().filter(l -> l.startsWith("{")).reduce((a, b) -> b)
          .orElseThrow(() -> new AssertionError("no JSON line in:\n" + bench.out()));
      return Json.MAPPER.readTree(json);
    }
  }

  static int freePort() {
    return dev.knockwatch.testkit.TestPorts.free();
  }

  String out() {
    return read(out);
  }

  /** The process id: the JVM's, since the launcher execs java. */
  long pid() {
    return process.pid();
  }

  boolean alive() {
    return process.isAlive();
  }

  String err() {
    return read(err);
  }

  private static String read(Path f) {
    try {
      return Files.exists(f) ? Files.readString(f, StandardCharsets.UTF_8) : "";
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The first line of stdout that contains {@code text}, waiting for it up to {@code timeout}. */
  String awaitLine(String text, Duration timeout) throws InterruptedException {
    return awaitLine(this::out, "stdout", text, timeout);
  }

  /** The first line of stderr (the log) that contains {@code text}, waiting for it up to {@code timeout}. */
  String awaitLogLine(String text, Duration timeout) throws InterruptedException {
    return awaitLine(this::err, "stderr", text, timeout);
  }

  /** The first line of stdout that {@code line} takes ({@code what} says which in a failure), waiting up to {@code timeout}. */
  String awaitLine(java.util.function.Predicate<String> line, String what, Duration timeout) throws InterruptedException {
    return awaitLine(this::out, "stdout", line, what, timeout);
  }

  private String awaitLine(java.util.function.Supplier<String> stream, String name, String text, Duration timeout)
      throws InterruptedException {
    return awaitLine(stream, name, l -> l.contains(text), "with \"" + text + "\"", timeout);
  }

  private String awaitLine(java.util.function.Supplier<String> stream, String name,
      java.util.function.Predicate<String> wanted, String what, Duration timeout) throws InterruptedException {
    Instant deadline = Instant.now().plus(timeout);
    while (true) {
      Optional<String> line = stream.get().lines().filter(wanted).findFirst();
      if (line.isPresent()) {
        return line.get();
      }
      if (!process.isAlive() || Instant.now().isAfter(deadline)) {
        throw new AssertionError("no line " + what + " on " + name + " " + (process.isAlive() ? "within "
            + timeout.toSeconds() + " s" : "before the process ended (exit " + process.exitValue() + ")")
            + "\nstdout:\n" + out() + "\nstderr (last 60 lines):\n" + tail(err(), 60));
      }
      Thread.sleep(100);
    }
  }

  static String tail(String text, int lines) {
    List<String> all = text.lines().toList();
    return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
  }

  /** The exit status once the process has ended by itself, waiting up to {@code timeout}. */
  int awaitExit(Duration timeout) throws InterruptedException {
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      throw new AssertionError("still running after " + timeout.toSeconds() + " s\nstdout:\n" + out()
          + "\nstderr (last 40 lines):\n" + tail(err(), 40));
    }
    return process.exitValue();
  }

  /** SIGTERM, as Ctrl-C or a service manager stops it; the exit status once it has stopped. */
  int stop(Duration timeout) throws InterruptedException {
    process.destroy();
    if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      throw new AssertionError("still running " + timeout.toSeconds() + " s after SIGTERM\nstderr (last 40 lines):\n"
          + tail(err(), 40));
    }
    return process.exitValue();
  }

  /** {@code GET /api/v1/commands/ID} of the query API on {@code port}, which must answer 200. */
  static JsonNode command(int port, String token, String commandId) throws Exception {
    HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + port + "/api/v1/commands/" + commandId))
        .header("Authorization", "Bearer " + token).timeout(Duration.ofSeconds(30)).build(),
        HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) {
      throw new AssertionError("GET /api/v1/commands/" + commandId + ": " + r.statusCode() + " " + r.body());
    }
    return Json.MAPPER.readTree(r.body());
  }

  /**
   * {@link #command}, asked again until its answer holds at least {@code events} events (or 60 s):
   * a page can reach the terminal before the timeline, another app, has the refusals behind it. A
   * connection the API closed unanswered is asked again too, as a user would: the JDK server
   * drops a request whose headers it has not read within 5 s ({@code maxReqTime}), and a loaded
   * machine can hold a just-started process that long.
   */
  static JsonNode command(int port, String token, String commandId, int events) throws Exception {
    Instant deadline = Instant.now().plusSeconds(60);
    while (true) {
      JsonNode answer = null;
      try {
        answer = command(port, token, commandId);
      } catch (AssertionError | IOException e) {
        if (Instant.now().isAfter(deadline)) {
          throw e; // not even one of them yet
        }
        System.out.println("Launched.command: asked again after " + e);
      }
      if (answer != null && (answer.path("events").asInt() >= events || Instant.now().isAfter(deadline))) {
        return answer;
      }
      Thread.sleep(200);
    }
  }

  /** Until both apps' groups have committed the violations topic's end, or 10 min. */
  static void awaitCaughtUp(Admin admin, Launched streams) throws Exception {
    Instant deadline = Instant.now().plus(Duration.ofMinutes(10));
    List<TopicPartition> parts = admin.describeTopics(List.of(Topics.VIOLATIONS.name())).allTopicNames().get()
        .get(Topics.VIOLATIONS.name()).partitions().stream()
        .map(p -> new TopicPartition(Topics.VIOLATIONS.name(), p.partition())).toList();
    Map<TopicPartition, OffsetSpec> latest = parts.stream().collect(Collectors.toMap(p -> p, p -> OffsetSpec.latest()));
    while (true) {
      Map<TopicPartition, Long> ends = admin.listOffsets(latest).all().get().entrySet().stream()
          .collect(Collectors.toMap(Map.Entry::getKey, e -> e.getValue().offset()));
      boolean done = true;
      for (String group : List.of("knockwatch-streams", "knockwatch-timeline")) {
        Map<TopicPartition, OffsetAndMetadata> at = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
            .get();
        for (TopicPartition p : parts) {
          OffsetAndMetadata o = at.get(p);
          // a transactional commit lands one past the last record (its marker)
          if (ends.get(p) > 0 && (o == null || o.offset() < ends.get(p) - 1)) {
            done = false;
          }
        }
      }
      if (done) {
        return;
      }
      if (!streams.alive() || Instant.now().isAfter(deadline)) {
        throw new AssertionError("streams did not catch up" + (streams.alive() ? " within 10 min" : ": it died")
            + "\nstderr:\n" + Launched.tail(streams.err(), 60));
      }
      Thread.sleep(500);
    }
  }

  @Override
  public void close() {
    if (process.isAlive()) {
      process.destroyForcibly();
    }
  }
}
