package dev.knockwatch.cli.bench;

import dev.knockwatch.events.WritableTopics;
import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Topics;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What a user would pick instead of the agent, parsing too: rsyslog and syslog-ng, as Debian
 * packages them, unpacked by {@code bench/syslogs.sh} (the launcher runs it). Each reads the
 * bench's input file from its start, parses the srt records (their JSON, then the refusal in
 * their line) and the Squid lines, and publishes JSON keyed by the command id to a topic of its
 * own. A run counts only if the topic then holds exactly one record per line, keyed as the line's
 * command id, every value a JSON object naming that id.
 */
final class Syslogs {

  /** One of the two: its binary under the unpacked root, its arguments, its configuration (a resource). */
  enum Tool {
    RSYSLOG("rsyslog", "Rsyslog", "usr/sbin/rsyslogd", "rsyslog.conf"),
    SYSLOG_NG("syslog-ng", "SyslogNg", "usr/sbin/syslog-ng", "syslog-ng.conf");

    final String label;
    /** Its name in the bench's figures: {@code rsyslogLinesPerSecond}, {@code coldCpuVsSyslogNg}. */
    final String field;
    final String binary;
    final String config;

    Tool(String label, String field, String binary, String config) {
      this.label = label;
      this.field = field;
      this.binary = binary;
      this.config = config;
    }

    /** Its command line in the foreground, nothing read from or written to the host's own syslog paths. */
    List<String> command(Path root, Path dir, Path conf) {
      Path bin = root.resolve(binary);
      return switch (this) {
        case RSYSLOG -> List.of(bin.toString(), "-n", "-iNONE", "-f", conf.toString(),
            "-M", root.resolve("usr/lib/x86_64-linux-gnu/rsyslog").toString());
        case SYSLOG_NG -> List.of(bin.toString(), "-F", "--no-caps", "-f", conf.toString(),
            "--module-path=" + root.resolve("usr/lib/syslog-ng/3.38"), "-R", dir.resolve("persist").toString(),
            "-p", dir.resolve("pid").toString(), "-c", dir.resolve("ctl").toString());
      };
    }
  }

  private static final Logger log = LoggerFactory.getLogger(Syslogs.class);

  /** A run whose topic gains nothing for this long has lost lines (or stopped reading): it fails. */
  static final Duration STALL = Duration.ofSeconds(60);

  private Syslogs() {}

  /** The libraries the unpacked binaries need (the host has not installed them). */
  static String libraryPath(Path root) {
    return String.join(":", root.resolve("usr/lib/x86_64-linux-gnu").toString(),
        root.resolve("lib/x86_64-linux-gnu").toString(), root.resolve("usr/lib/syslog-ng").toString());
  }

  /** Whether {@code root} holds both, as {@code bench/syslogs.sh} unpacks them. */
  static boolean present(Path root) {
    return root != null && List.of(Tool.values()).stream().allMatch(t -> Files.isExecutable(root.resolve(t.binary)));
  }

  /**
   * Each tool on {@code input}, one after the other: its lines/s and lines per CPU-second, and the
   * agent's cold and warm CPU-seconds over its own ({@code coldCpuVsRsyslog}: 2 is twice as
   * frugal). A tool that fails says why in its place; the others still run.
   */
  static Map<String, Object> compare(Path root, EmbeddedKafkaBroker broker, Path input, Path tmp, double coldCpu,
      double warmCpu) throws Exception {
    Map<String, Long> keys = expectedKeys(input);
    long lines = keys.values().stream().mapToLong(Long::longValue).sum();
    Map<String, Object> out = new LinkedHashMap<>();
    for (Tool tool : Tool.values()) {
      String name = Character.toLowerCase(tool.field.charAt(0)) + tool.field.substring(1);
      Baseline b;
      try {
        b = run(tool, root, broker, input, tmp, keys);
      } catch (IllegalStateException e) { // the agent's figures still print, beside why this one has none
        log.warn("{}", e.getMessage());
        out.put(name, "failed: " + e.getMessage().lines().findFirst().orElse(""));
        continue;
      }
      out.put(name + "LinesPerSecond", Math.round(lines / b.seconds()));
      out.put(name + "LinesPerCpuSecond", Math.round(lines / b.cpuSeconds()));
      out.put(name + "RecordsVerified", lines);
      out.put("coldCpuVs" + tool.field, Stats.speedRatio(coldCpu, b.cpuSeconds()));
      out.put("warmCpuVs" + tool.field, Stats.speedRatio(warmCpu, b.cpuSeconds()));
    }
    return out;
  }

  /** How many lines of {@code input} name each command id: the keys every run must publish, exactly. */
  static Map<String, Long> expectedKeys(Path input) throws IOException {
    Map<String, Long> keys = new HashMap<>();
    try (BufferedReader r = Files.newBufferedReader(input, StandardCharsets.UTF_8)) {
      for (String line = r.readLine(); line != null; line = r.readLine()) {
        String id = line.startsWith("{") ? Json.MAPPER.readTree(line).path("commandId").asText()
            : line.split(" +")[8];
        keys.merge(id, 1L, Long::sum);
      }
    }
    return keys;
  }

  /**
   * Runs {@code tool} on {@code input} until its topic holds {@code lines} records: the wall time
   * from its start and its process's CPU (every thread), after checking every record.
   */
  static Baseline run(Tool tool, Path root, EmbeddedKafkaBroker broker, Path input, Path tmp, Map<String, Long> expected)
      throws Exception {
    long lines = expected.values().stream().mapToLong(Long::longValue).sum();
    Topics.Topic topic = new Topics.Topic("bench." + tool.label, Topics.VIOLATIONS.partitions(), Map.of(), null,
        "the generated lines as " + tool.label + " publishes them");
    Path dir = Files.createDirectories(tmp.resolve(tool.label));
    Path work = Files.createDirectories(dir.resolve("work"));
    Path conf = dir.resolve(tool.config);
    Files.writeString(conf, template(tool.config).replace("@INPUT@", input.toString()).replace("@WORK@", work.toString())
        .replace("@BOOTSTRAP@", broker.bootstrapServers()).replace("@TOPIC@", topic.name()));
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      WritableTopics.create(admin, List.of(new NewTopic(topic.name(), topic.partitions(), (short) 1)));
      ProcessBuilder pb = new ProcessBuilder(tool.command(root, dir, conf)).redirectErrorStream(true)
          .redirectOutput(dir.resolve("out").toFile());
      pb.environment().put("LD_LIBRARY_PATH", libraryPath(root));
      long t0 = System.nanoTime();
      Process p = pb.start();
      double seconds;
      double cpu;
      try {
        long seen = 0;
        Instant lastProgress = Instant.now();
        for (long now; (now = Offsets.records(admin, topic)) < lines; seen = now) {
          if (now > seen) {
            lastProgress = Instant.now();
          }
          if (!p.isAlive() || Instant.now().isAfter(lastProgress.plus(STALL))) {
            throw new IllegalStateException(tool.label + (p.isAlive() ? " stalled at " + now + " of " + lines
                + " records" : " exited") + ": " + Files.readString(dir.resolve("out")).strip());
          }
          Thread.sleep(20);
        }
        seconds = (System.nanoTime() - t0) / 1e9;
        cpu = AsDeployed.cpu(p);
        Thread.sleep(2_000); // anything sent twice has time to arrive
      } finally {
        p.destroy();
        p.waitFor(30, TimeUnit.SECONDS);
      }
      verify(tool.label, broker, topic, expected);
      return new Baseline(seconds, cpu);
    }
  }

  /** Every record keyed by a line's command id, each id as often as in the input, every value JSON naming it. */
  static void verify(String label, EmbeddedKafkaBroker broker, Topics.Topic topic, Map<String, Long> expected) {
    Map<String, Long> seen = new HashMap<>();
    Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(),
        ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5_000);
    try (KafkaConsumer<String, String> c = new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer())) {
      List<TopicPartition> parts = Offsets.partitions(topic);
      c.assign(parts);
      c.seekToBeginning(parts);
      Map<TopicPartition, Long> ends = c.endOffsets(parts);
      while (parts.stream().anyMatch(tp -> c.position(tp) < ends.get(tp))) {
        for (ConsumerRecord<String, String> r : c.poll(Duration.ofSeconds(1))) {
          JsonNode value = readJson(r.value());
          JsonNode id = value == null || !value.isObject() ? null : value.findValue("commandId");
          if (r.key() == null || id == null || !r.key().equals(id.asText())) {
            throw new IllegalStateException(label + " published a record not keyed by its command id: key "
                + r.key() + ", value " + r.value());
          }
          seen.merge(r.key(), 1L, Long::sum);
        }
      }
    }
    if (!seen.equals(expected)) {
      long got = seen.values().stream().mapToLong(Long::longValue).sum();
      throw new IllegalStateException(label + " published " + got + " records whose keys differ from the input's "
          + expected.values().stream().mapToLong(Long::longValue).sum() + " lines: a line lost, sent twice or mis-keyed");
    }
  }

  private static JsonNode readJson(String text) {
    try {
      return text == null ? null : Json.MAPPER.readTree(text);
    } catch (IOException e) {
      return null;
    }
  }

  private static String template(String name) throws IOException {
    try (InputStream in = Syslogs.class.getResourceAsStream(name)) {
      return new String(Objects.requireNonNull(in, name).readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
