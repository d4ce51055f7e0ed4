package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Topics;
import dev.knockwatch.testkit.TopicReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 25: a re-send after a crash changes nothing. Two storms of the same shape, each in its
 * own log directory, read by {@code ./knockwatch ingest} as the launcher runs it; storm B is read
 * a second time by an agent that lost its checkpoint (the worst an ingest crash can do), so every
 * one of its lines reaches the topic twice with its event id, and its strace lines, which have no
 * time of their own, twice with different times. {@code ./knockwatch streams} then shows storm B as
 * storm A: the same events per command in the timeline, the same rules firing, no warning for a
 * command refused 3 times, and every refusal counted once in its metrics.
 */
@Tag("integration")
class ResendTest {

  static final String TOKEN = "resend-test-token-0123456789";
  static final int BUSY_SRT = 20;
  static final int BUSY_STRACE = 20;
  static final int QUIET = 3;
  static final Pattern REFUSALS = Pattern.compile("(?m)^knockwatch_streams_refusals_total\\{[^}]*} (\\S+)$");
  static final Pattern DUPLICATES = Pattern.compile("(?m)^knockwatch_streams_exact_duplicates_total\\{[^}]*} (\\S+)$");

  @TempDir Path dir;

  record Storm(String name, List<String> quiet, List<String> busy) {
    int lines() {
      return quiet.size() * QUIET + busy.size() * (BUSY_SRT + BUSY_STRACE);
    }

    List<String> commands() {
      List<String> all = new ArrayList<>(quiet);
      all.addAll(busy);
      return all;
    }
  }

  @Test
  void aStormReadTwiceWithItsEventIdsIsCountedAsAStormReadOnce() throws Exception {
    Path checkout = Launched.copyOfRepository(dir.resolve("checkout"));
    Storm a = write(checkout, "a");
    Storm b = write(checkout, "b");
    try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(dir.resolve("kafka"), 0)) {
      broker.createTopics();
      int apiPort = Launched.freePort();
      int metricsPort = Launched.freePort();
      try (Launched streams = Launched.start(checkout, dir.resolve("streams"), Map.of("KNOCKWATCH_API_TOKEN", TOKEN),
          "streams", "--bootstrap-servers", broker.bootstrapServers(), "--api-port", String.valueOf(apiPort),
          "--metrics-port", String.valueOf(metricsPort));
          Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
        streams.awaitLine("knockwatch streams:", Duration.ofSeconds(180));
        long published = 0;
        published = ingest(checkout, broker, "logs-a", "var-a", published + a.lines());
        published = ingest(checkout, broker, "logs-b", "var-b", published + b.lines());
        // the same files again, with no checkpoint: every line once more, with the id it had
        published = ingest(checkout, broker, "logs-b", "var-b-lost", published + b.lines());
        assertThat(published).isEqualTo(a.lines() + 2L * b.lines());
        Launched.awaitCaughtUp(admin, streams);

        List<Alert> alerts = TopicReader.readToEnd(broker, Topics.ALERTS.name(), Json.serde(Alert.class).deserializer(),
            r -> true).stream().map(r -> r.value()).toList();
        for (Storm s : List.of(a, b)) {
          for (String cmd : s.quiet()) {
            assertThat(Launched.command(apiPort, TOKEN, cmd).path("events").asLong()).as(cmd).isEqualTo(QUIET);
            assertThat(alerts).as("alerts of %s, refused %d times", cmd, QUIET).noneMatch(x -> x.commandId().equals(cmd));
          }
          for (String cmd : s.busy()) {
            assertThat(Launched.command(apiPort, TOKEN, cmd).path("events").asLong()).as(cmd).isEqualTo(BUSY_SRT + BUSY_STRACE);
          }
        }
        for (int i = 0; i < a.busy().size(); i++) {
          Set<String> rulesA = rules(alerts, a.busy().get(i));
          assertThat(rulesA).contains("persistent-retry", "off-role-host");
          assertThat(rules(alerts, b.busy().get(i))).isEqualTo(rulesA);
        }
        String metrics = FloodFairnessTest.scrape(metricsPort);
        assertThat(FloodFairnessTest.sum(REFUSALS, metrics)).as("refusals counted").isEqualTo(a.lines() + b.lines());
        assertThat(FloodFairnessTest.sum(DUPLICATES, metrics)).as("copies dropped").isEqualTo(b.lines());
        System.out.println("ResendTest: " + published + " events published for " + (a.lines() + b.lines())
            + " lines; counted " + FloodFairnessTest.sum(REFUSALS, metrics));
      }
    }
  }

  /**
   * A storm under {@code logs-NAME/ci-runner-NAME/}: three commands refused 3 times on an in-role
   * host by srt, three refused 20 times by srt (one of them off-role) and 20 times by strace.
   */
  private static Storm write(Path checkout, String name) throws Exception {
    Path agent = Files.createDirectories(checkout.resolve("logs-" + name + "/ci-runner-" + name));
    Instant t0 = Instant.now().minusSeconds(60);
    List<String> quiet = new ArrayList<>();
    List<String> busy = new ArrayList<>();
    for (int c = 0; c < 6; c++) {
      String cmd = String.format("ResendTest%sCommand%05d", name.toUpperCase(), c);
      boolean isBusy = c % 2 == 1;
      (isBusy ? busy : quiet).add(cmd);
      StringBuilder srt = new StringBuilder();
      for (int i = 0; i < (isBusy ? BUSY_SRT : QUIET); i++) {
        String host = isBusy && i == 3 ? "exfil.example:443" : "registry.npmjs.org:443";
        srt.append("{\"line\":\"deny network-outbound ").append(host).append(" (host is not on the allow list)\",")
            .append("\"commandId\":\"").append(cmd).append("\",\"timestamp\":\"")
            .append(t0.plusMillis(1_000L * c + 100L * i)).append("\"}\n");
      }
      Files.writeString(agent.resolve(cmd + ".violations.jsonl"), srt);
      if (isBusy) {
        StringBuilder strace = new StringBuilder();
        for (int i = 0; i < BUSY_STRACE; i++) {
          strace.append(200 + i).append("   connect(5, {sa_family=AF_INET, sin_port=htons(443), ")
              .append("sin_addr=inet_addr(\"93.184.215.14\")}, 16) = -1 ENETUNREACH (Network is unreachable)\n");
        }
        Files.writeString(agent.resolve(cmd + ".strace"), strace);
      }
    }
    return new Storm(name, quiet, busy);
  }

  /** Runs {@code ./knockwatch ingest} on {@code logs} until the violations topic holds {@code until} records, then stops it. */
  private static long ingest(Path checkout, EmbeddedKafkaBroker broker, String logs, String var, long until)
      throws Exception {
    try (Launched ingest = Launched.start(checkout, checkout.resolve("out-" + var), Map.of(), "ingest", "--logs", logs,
        "--var", var, "--bootstrap-servers", broker.bootstrapServers(), "--metrics-port", "0")) {
      Instant deadline = Instant.now().plus(Duration.ofMinutes(3));
      long n;
      while ((n = TopicReader.recordCount(broker, Topics.VIOLATIONS.name())) < until) {
        if (!ingest.alive() || Instant.now().isAfter(deadline)) {
          throw new AssertionError(n + " of " + until + " events published\nstdout:\n" + ingest.out() + "\nstderr:\n"
              + Launched.tail(ingest.err(), 40));
        }
        Thread.sleep(100);
      }
      Thread.sleep(1_000); // anything more it would send is on the topic by now
      ingest.stop(Duration.ofSeconds(30));
      return TopicReader.recordCount(broker, Topics.VIOLATIONS.name());
    }
  }

  private static Set<String> rules(List<Alert> alerts, String cmd) {
    return alerts.stream().filter(x -> x.commandId().equals(cmd)).map(Alert::rule)
        .collect(Collectors.toCollection(TreeSet::new));
  }
}
