package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The first ten minutes: {@code ./knockwatch up} in a copy of the repository, exactly as the
 * README tells a new user to run it (default relative paths, no flag but the three ports, chosen
 * free so the test cannot collide with anything), must print what the README shows: the banner,
 * the guard probes' result, the demo command's off-role PAGE and persistent-retry WARNING; then
 * the README's "Try it" block, run verbatim, must bring the two alerts its text names; and stop
 * cleanly on SIGTERM. The README's blocks are the expected output: change one, change the other.
 */
@Tag("integration")
class FirstRunTest {

  static final Duration FIRST_START = Duration.ofMinutes(6); // a first run may install srt (npm ci)
  static final Duration DEMO = Duration.ofMinutes(4);
  static final Pattern DEMO_COMMAND = Pattern.compile("command=([A-Za-z0-9_-]{22}) agent=knockwatch-limit");

  @TempDir Path dir;

  @Test
  void upAsTheReadmeRunsItPrintsWhatTheReadmeShowsAndStopsCleanlyOnSigterm() throws Exception {
    Path checkout = Launched.copyOfRepository(dir.resolve("checkout"));
    int kafka = Launched.freePort();
    int metrics = Launched.freePort();
    int api = Launched.freePort();
    int otlp = Launched.freePort();
    try (Launched up = Launched.start(checkout, dir.resolve("run"), Map.of(), "up", "--kafka-port",
        String.valueOf(kafka), "--metrics-port", String.valueOf(metrics), "--api-port", String.valueOf(api),
        "--otlp-port", String.valueOf(otlp))) {
      up.awaitLine("Ctrl-C to stop.", FIRST_START);
      String demo = up.awaitLine("knockwatch: limit probe: command ", DEMO);
      String id = demo.replaceAll(".*command (\\S+) knocked.*", "$1");
      up.awaitLine("ALERT [WARNING] persistent-retry firing command=" + id, Duration.ofMinutes(1));

      List<String> expected = readmeOutput(kafka, metrics, api, otlp);
      int bannerLines = expected.indexOf(Pattern.quote("Ctrl-C to stop.")) + 1;
      assertThat(bannerLines).as("the README's banner ends with Ctrl-C to stop.").isGreaterThan(8);
      List<String> out = up.out().lines().toList();
      assertThat(out.indexOf("Ctrl-C to stop.") + 1).as("the banner's length").isEqualTo(bannerLines);
      for (int i = 0; i < bannerLines; i++) {
        assertThat(out.get(i)).as("banner line " + (i + 1)).matches(expected.get(i));
      }
      for (String line : expected.subList(bannerLines, expected.size())) {
        assertThat(out).as("the README's line " + line).anyMatch(l -> l.matches(line));
      }
      // the demo's alerts are of the command the limit probe ran
      Matcher m = DEMO_COMMAND.matcher(up.out());
      while (m.find()) {
        assertThat(m.group(1)).isEqualTo(id);
      }
      // the README's "Try it", verbatim in the checkout up runs in: both alerts its text promises
      ReadmeBlocks.Block tryIt = ReadmeBlocks.read().starting("sh", "mkdir -p var/logs/ci-runner-1");
      ReadmeBlocks.Ran ran = ReadmeBlocks.run(tryIt, checkout, Map.of());
      assertThat(ran.exit()).as(ran.output()).isZero();
      assertThat(up.awaitLine("ALERT [PAGE] off-role-host firing command=DemoCommandId000000001 ", DEMO))
          .contains("agent=ci-runner-1 role=ci host=evil.example:443");
      assertThat(up.awaitLine("ALERT [WARNING] persistent-retry firing command=DemoCommandId000000001 ", DEMO))
          .contains("count=5");

      // the README's "Ask about a command", verbatim: the demo command's timeline, line for line as the README shows it
      List<String> shown = ReadmeBlocks.read().starting("text", "command  DemoCommandId000000001").text().strip().lines()
          .map(FirstRunTest::timelinePattern).toList();
      ReadmeBlocks.Block query = ReadmeBlocks.read().starting("sh", "./knockwatch query DemoCommandId000000001");
      // the timeline's sixth event and its second alert may follow the terminal's alerts by a commit or two
      ReadmeBlocks.Ran asked = ReadmeBlocks.runUntil(query, checkout, Map.of(),
          List.of("events   6", " off-role-host ", " persistent-retry "), DEMO);
      assertThat(asked.exit()).as(asked.output()).isZero();
      List<String> answered = asked.output().strip().lines().toList();
      assertThat(answered).as(asked.output()).hasSameSizeAs(shown);
      for (int i = 0; i < shown.size(); i++) {
        assertThat(answered.get(i)).as("query's line " + (i + 1)).matches(shown.get(i));
      }

      assertSaidOnce(up);
      assertStaticMembers(kafka, Files.readString(checkout.resolve("var").resolve(InstanceId.FILE)).strip());

      int exit = up.stop(Duration.ofSeconds(90));
      assertThat(exit).as("the JVM's status after SIGTERM, once the shutdown hook has run").isEqualTo(128 + 15);
      assertThat(checkout.resolve("var/kafka/data/.kafka_cleanshutdown")).as("the broker stopped cleanly").exists();
      // the terminal: up's own lines only; Kafka's and Kafka Streams' start and stop in var/log/knockwatch.log
      List<String> lines = up.out().lines().toList();
      assertThat(lines.get(lines.size() - 1)).as("up's last line, as the README's \"Stop it\" shows it")
          .isEqualTo(ReadmeBlocks.read().starting("text", "knockwatch stopped").text().strip());
      assertThat(up.err().lines()).as("stderr: the launcher's own lines (the first build), nothing of Kafka's")
          .allMatch(l -> l.startsWith("knockwatch: "));
      assertThat(up.out() + up.err()).as("no escape codes when the output is no terminal").doesNotContain("\u001b");
      String log = Files.readString(checkout.resolve("var/log/knockwatch.log"));
      assertThat(log).contains("INFO [main] dev.knockwatch.broker.EmbeddedKafkaBroker - starting the embedded Kafka broker",
          "dev.knockwatch.broker.EmbeddedKafkaBroker - embedded Kafka broker on port " + kafka + " stopped",
          "WARN [").doesNotContain("while stopping");
    }
  }

  @Test
  void whenTheSandboxCannotRunUpSaysWhyOnceAndTheEmitterWritesTheSameDemo() throws Exception {
    Path checkout = Launched.copyOfRepository(dir.resolve("checkout"));
    // a bridge that is there but fails, as one does on a host without user namespaces
    Path bridge = Files.createDirectories(dir.resolve("broken-bridge"));
    Files.writeString(bridge.resolve("bridge.mjs"),
        "process.stderr.write('knockwatch-srt-bridge: no user namespaces here\\n'); process.exit(70);\n");
    Path library = Files.createDirectories(bridge.resolve("node_modules/@anthropic-ai/sandbox-runtime"));
    Files.writeString(library.resolve("package.json"), "{\"name\": \"@anthropic-ai/sandbox-runtime\"}\n");
    try (Launched up = Launched.start(checkout, dir.resolve("run"), Map.of("KNOCKWATCH_SRT_BRIDGE", bridge.toString()),
        "up", "--kafka-port", String.valueOf(Launched.freePort()), "--metrics-port", String.valueOf(Launched.freePort()),
        "--api-port", String.valueOf(Launched.freePort()))) {
      up.awaitLine("Ctrl-C to stop.", FIRST_START);
      String fallback = up.awaitLine("the emitter wrote the demo's", DEMO);
      assertThat(fallback).matches("knockwatch: the demo could not run in the real sandbox \\(a limit probe command failed:"
          + " the srt bridge failed \\(exit 70\\): knockwatch-srt-bridge: no user namespaces here\\); the emitter wrote"
          + " the demo's 6 refusals for command [A-Za-z0-9_-]{22}");
      String id = fallback.substring(fallback.length() - 22);
      assertThat(up.awaitLine("ALERT [PAGE] off-role-host firing command=" + id, Duration.ofMinutes(1)))
          .contains("agent=knockwatch-limit role=default host=example.com:443 count=1");
      assertThat(up.awaitLine("ALERT [WARNING] persistent-retry firing command=" + id, Duration.ofMinutes(1)))
          .contains("agent=knockwatch-limit role=default count=5");
      assertThat(up.out().lines().filter(l -> l.startsWith("knockwatch: guard probes")))
          .containsExactly("knockwatch: guard probes did not run: the srt bridge failed (exit 70):"
              + " knockwatch-srt-bridge: no user namespaces here");
      assertSaidOnce(up);
      up.stop(Duration.ofSeconds(90));
    }
  }

  /**
   * Every consumer group of {@code up} holds static members named after the id kept in
   * {@code var/}: a restart after kill -9 takes their place instead of waiting out their sessions.
   */
  static void assertStaticMembers(int kafka, String instanceId) throws Exception {
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + kafka))) {
      List<String> groups = List.of("knockwatch-streams", "knockwatch-timeline", "knockwatch-notify");
      Map<String, ConsumerGroupDescription> described = admin.describeConsumerGroups(groups).all().get(30, TimeUnit.SECONDS);
      for (String group : groups) {
        assertThat(described.get(group).members()).as(group).isNotEmpty().allSatisfy(m ->
            assertThat(m.groupInstanceId()).as(group + "'s member").hasValueSatisfying(v -> assertThat(v).startsWith(instanceId)));
      }
    }
  }

  /** No line says the same thing many times, and no prefix is doubled. */
  static void assertSaidOnce(Launched up) {
    assertThat(up.out() + up.err()).doesNotContain("knockwatch: knockwatch:");
    assertThat(up.err().lines().filter(l -> l.contains("from knockwatch.policy in use"))).hasSizeLessThanOrEqualTo(1);
  }

  /**
   * The README's output block as patterns: its lines as they are, but for what differs run to
   * run (ports, ids, the token, fingerprints, times, the policy version).
   */
  /** A line of the README's query output as a pattern: its times, fingerprints and spans are the run's own. */
  static String timelinePattern(String line) {
    return Pattern.quote(line)
        .replaceAll("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z", "\\\\E\\\\S+Z\\\\Q")
        .replaceAll("(?<=  )[0-9a-f]{16}(?=  )", "\\\\E[0-9a-f]{16}\\\\Q")
        .replaceAll("(?<=times in )\\d+s", "\\\\E\\\\d+s\\\\Q")
        // the retry alert's count and summary: 5 when it fired, 6 once its update (at most every 30 s) is out
        .replaceAll("(?<=persistent-retry\\s{1,20})5(?= )", "\\\\E[56]\\\\Q")
        .replaceAll("(?<=refused )5(?= times)", "\\\\E[56]\\\\Q");
  }

  static List<String> readmeOutput(int kafka, int metrics, int api, int otlp) throws IOException {
    String block = ReadmeBlocks.read().starting("text", "knockwatch is up").text();
    List<String> patterns = new ArrayList<>();
    for (String line : block.strip().lines().toList()) {
      String p = Pattern.quote(line);
      p = p.replace("127.0.0.1:9092", "\\E127.0.0.1:" + kafka + "\\Q")
          .replace("127.0.0.1:9464", "\\E127.0.0.1:" + metrics + "\\Q")
          .replace("127.0.0.1:8080", "\\E127.0.0.1:" + api + "\\Q")
          .replace("127.0.0.1:4318", "\\E127.0.0.1:" + otlp + "\\Q");
      p = p.replaceAll("(?<=to choose one\\): )\\S+", "\\\\E\\\\S+\\\\Q")
          .replaceAll("(?<=command[= ])[A-Za-z0-9_-]{22}", "\\\\E[A-Za-z0-9_-]{22}\\\\Q")
          .replaceAll("(?<=fingerprint=)[0-9a-f]{16}", "\\\\E[0-9a-f]{16}\\\\Q")
          .replaceAll("(?<=policy )[0-9a-f]{12}", "\\\\E[0-9a-f]{12}\\\\Q")
          .replaceAll("(?<=times in )\\d+s", "\\\\E\\\\d+s\\\\Q")
          .replaceAll("(?<=window=)\\d\\d:\\d\\d:\\d\\d-\\d\\d:\\d\\d:\\d\\dZ", "\\\\E\\\\d\\\\d:\\\\d\\\\d:\\\\d\\\\d-\\\\d\\\\d:\\\\d\\\\d:\\\\d\\\\dZ\\\\Q");
      patterns.add(p);
    }
    return patterns;
  }
}
