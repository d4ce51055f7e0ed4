package dev.knockwatch.cli.bench;

import dev.knockwatch.events.WritableTopics;
import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.Topics;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;

/**
 * What a user would pick instead of the ingest agent: {@code kafkacat -P} publishing the same
 * bytes, unparsed, to a topic of as many partitions. It parses, keys and redacts nothing: the
 * ceiling the agent is compared with.
 */
final class Kafkacat {

  private Kafkacat() {}

  /** The faster of two runs (the ceiling: the broker shares the bench's JVM, busier at some times than others); either may be missing. */
  static Optional<Baseline> faster(Optional<Baseline> before, Optional<Baseline> after) {
    if (before.isEmpty() || after.isEmpty()) {
      return before.isEmpty() ? after : before;
    }
    return Optional.of(before.get().seconds() <= after.get().seconds() ? before.get() : after.get());
  }

  /** The files one after the other, in one file: kafkacat's input (a file, not a pipe, as the agent reads). */
  static Path join(List<Path> files, Path joined) throws IOException {
    try (OutputStream out = Files.newOutputStream(joined)) {
      for (Path file : files) {
        Files.copy(file, out);
      }
    }
    return joined;
  }

  /**
   * Publishes {@code input}'s {@code lines} lines to a new topic {@code topic}; empty when neither
   * {@code binary} nor kafkacat is installed.
   */
  static Optional<Baseline> publish(EmbeddedKafkaBroker broker, String binary, Path input, String topic, long lines)
      throws Exception {
    Topics.Topic raw = new Topics.Topic(topic, Topics.VIOLATIONS.partitions(), Map.of(), null, "the generated lines, unparsed");
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      WritableTopics.create(admin, List.of(new NewTopic(topic, raw.partitions(), (short) 1)));
    }
    String bin = "$(command -v " + binary + " || command -v kafkacat)";
    String script = bin + " -P -b " + broker.bootstrapServers()
        + " -t " + topic + " -z lz4 -X acks=all -X linger.ms=5 < '" + input + "'; rc=$?; times; exit $rc";
    long t0 = System.nanoTime();
    Process p;
    try {
      p = new ProcessBuilder("bash", "-c", script).redirectErrorStream(true).start();
    } catch (IOException e) {
      return Optional.empty();
    }
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    int rc = p.waitFor();
    double seconds = (System.nanoTime() - t0) / 1e9;
    if (rc != 0) {
      if (output.contains("not found")) {
        return Optional.empty();
      }
      throw new IllegalStateException("kafkacat failed: " + output.strip());
    }
    // the ceiling counts only if every line is on the topic
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      long onTopic = Offsets.records(admin, raw);
      if (onTopic != lines) {
        throw new IllegalStateException("kafkacat put " + onTopic + " of " + lines + " lines on " + topic + ": " + output.strip());
      }
    }
    return Optional.of(new Baseline(seconds, childCpuSeconds(output)));
  }

  /**
   * The children's user plus system seconds from the output of bash's {@code times}, which prints
   * the shell's, then its children's, each as {@code 0m1.234s 0m0.100s}: the last such line.
   */
  static double childCpuSeconds(String output) {
    List<String> timeLines = output.lines().filter(l -> l.matches("\\d+m[\\d.]+s \\d+m[\\d.]+s")).toList();
    if (timeLines.isEmpty()) {
      throw new IllegalArgumentException("no times in: " + output.strip());
    }
    String[] children = timeLines.get(timeLines.size() - 1).split(" ");
    return seconds(children[0]) + seconds(children[1]);
  }

  /** {@code 1m2.500s} as seconds: 62.5. */
  static double seconds(String minutesAndSeconds) {
    String[] parts = minutesAndSeconds.replace("s", "").split("m");
    return Integer.parseInt(parts[0]) * 60 + Double.parseDouble(parts[1]);
  }
}
