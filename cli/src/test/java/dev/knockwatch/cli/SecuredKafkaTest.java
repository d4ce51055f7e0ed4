package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.Topics;
import dev.knockwatch.testkit.HttpRecorder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 26: every command that talks to Kafka takes {@code --kafka-config FILE} (Java properties,
 * as Kafka's own {@code --command-config}) and hands it to every client it makes. A broker whose
 * client listener takes only SASL logins: {@code topics}, {@code streams}, {@code notify},
 * {@code ingest} and {@code silence}, each run by the launcher with relative paths, take an srt
 * line to a page on a local webhook; a wrong password, and a client without the SASL settings, are
 * one line each naming the address and the cause, exit 1; the password is in no output.
 */
@Tag("integration")
class SecuredKafkaTest {

  static final String PASSWORD = "kw-Pa55word-d0-not-print";
  static final String WRONG = "wrong-Pa55word-d0-not-print";
  static final String CMD = "SecuredKafkaTestCommand1";
  static final String TOKEN = "secured-kafka-test-token-0123";

  @TempDir Path dir;

  @Test
  void everyStageRunsOnASaslOnlyListenerAndAWrongPasswordIsOneLine() throws Exception {
    Path checkout = Launched.copyOfRepository(dir.resolve("checkout"));
    Files.writeString(checkout.resolve("kafka.properties"), properties(PASSWORD));
    Files.writeString(checkout.resolve("wrong.properties"), properties(WRONG));
    List<Launched> all = new ArrayList<>();
    try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.startWithSasl(dir.resolve("kafka"),
            Map.of("knockwatch", PASSWORD));
        HttpRecorder soc = new HttpRecorder();
        Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      String sasl = broker.saslBootstrapServers();
      Instant t0 = Instant.now();
      Launched wrong = launch(all, checkout, "wrong", Map.of(), "topics", "--bootstrap-servers", sasl,
          "--kafka-config", "wrong.properties");
      assertThat(wrong.awaitExit(Duration.ofSeconds(60))).as(wrong.err()).isEqualTo(1);
      double wrongSeconds = Duration.between(t0, Instant.now()).toMillis() / 1000.0;
      List<String> lines = wrong.err().lines().filter(l -> l.startsWith("knockwatch:")).toList();
      assertThat(lines).hasSize(1);
      assertThat(lines.get(0)).contains(sasl, "refused the login");
      assertThat(admin.listTopics().names().get()).as("nothing made with a wrong password")
          .doesNotContain(Topics.VIOLATIONS.name());

      t0 = Instant.now();
      Launched plain = launch(all, checkout, "plain", Map.of(), "topics", "--bootstrap-servers", sasl);
      assertThat(plain.awaitExit(Duration.ofSeconds(60))).as("a plaintext client on a SASL listener").isEqualTo(1);
      double plainSeconds = Duration.between(t0, Instant.now()).toMillis() / 1000.0;
      List<String> plainLines = plain.err().lines().filter(l -> l.startsWith("knockwatch:")).toList();
      assertThat(plainLines).hasSize(1);
      assertThat(plainLines.get(0)).contains(sasl, "another security.protocol than PLAINTEXT");

      Launched topics = launch(all, checkout, "topics", Map.of(), "topics", "--bootstrap-servers", sasl,
          "--kafka-config", "kafka.properties");
      assertThat(topics.awaitExit(Duration.ofSeconds(120))).as(topics.err()).isZero();
      assertThat(admin.listTopics().names().get()).contains(Topics.VIOLATIONS.name(), Topics.ALERTS.name());

      Path rules = Files.createDirectories(checkout.resolve("notify-rules"));
      Files.writeString(rules.resolve("receivers.yaml"), """
          receivers:
            - {name: hook, type: webhook, url: "%s"}
          routes:
            - receivers: [hook]
          """.formatted(soc.url("/hook")));
      Launched streams = launch(all, checkout, "streams", Map.of("KNOCKWATCH_API_TOKEN", TOKEN), "streams",
          "--bootstrap-servers", sasl, "--kafka-config", "kafka.properties",
          "--api-port", String.valueOf(Launched.freePort()), "--metrics-port", String.valueOf(Launched.freePort()));
      Launched notify = launch(all, checkout, "notify", Map.of(), "notify", "--bootstrap-servers", sasl,
          "--kafka-config", "kafka.properties", "--rules", "notify-rules", "--metrics-port",
          String.valueOf(Launched.freePort()));
      Launched ingest = launch(all, checkout, "ingest", Map.of(), "ingest", "--bootstrap-servers", sasl,
          "--kafka-config", "kafka.properties", "--logs", "logs", "--var", "var-ingest");
      streams.awaitLine("knockwatch streams:", Duration.ofSeconds(180));
      ingest.awaitLine("knockwatch ingest:", Duration.ofSeconds(120));
      Path log = Files.createDirectories(checkout.resolve("logs/ci-runner-1")).resolve(CMD + ".violations.jsonl");
      Files.writeString(log, "{\"line\":\"deny network-outbound exfil.example:443 (host is not on the allow list)\","
          + "\"commandId\":\"" + CMD + "\",\"timestamp\":\"" + Instant.now() + "\"}\n");
      List<HttpRecorder.Request> pages = soc.await(r -> r.body().contains(CMD), 1, Duration.ofSeconds(180));
      assertThat(pages).as("the page, over SASL all the way\nnotify:\n%s\nstreams:\n%s\ningest:\n%s",
          Launched.tail(notify.err(), 20), Launched.tail(streams.err(), 20), Launched.tail(ingest.err(), 20))
          .hasSize(1);
      assertThat(pages.get(0).body()).contains("off-role-host");

      Launched add = launch(all, checkout, "silence-add", Map.of(), "silence", "add", "--bootstrap-servers", sasl,
          "--kafka-config", "kafka.properties", "--rule", "off-role-host", "--command", CMD, "--comment", "triaged");
      assertThat(add.awaitExit(Duration.ofSeconds(60))).as(add.err()).isZero();
      Launched list = launch(all, checkout, "silence-list", Map.of(), "silence", "list", "--bootstrap-servers", sasl,
          "--kafka-config", "kafka.properties");
      assertThat(list.awaitExit(Duration.ofSeconds(60))).as(list.err()).isZero();
      assertThat(list.out()).contains(CMD, "triaged");

      for (Launched l : all) {
        assertThat(l.out() + l.err()).doesNotContain(PASSWORD, WRONG);
      }
      System.out.printf("SecuredKafkaTest: a wrong password ended `topics` in %.1f s: %s%n", wrongSeconds, lines.get(0));
      System.out.printf("SecuredKafkaTest: a plaintext client ended `topics` in %.1f s: %s%n", plainSeconds,
          plainLines.get(0));
    } finally {
      all.forEach(Launched::close);
    }
  }

  private static Launched launch(List<Launched> all, Path checkout, String name, Map<String, String> env,
      String... args) throws Exception {
    Launched l = Launched.start(checkout, checkout.resolve("out-" + name), env, args);
    all.add(l);
    return l;
  }

  private static String properties(String password) {
    return """
        # as for Kafka's own --command-config
        security.protocol=SASL_PLAINTEXT
        sasl.mechanism=PLAIN
        sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \\
            username="knockwatch" password="%s";
        """.formatted(password);
  }
}
