package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Topics;
import dev.knockwatch.testkit.HttpRecorder;
import dev.knockwatch.testkit.SelfSignedTls;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.utils.internals.Exit;
import org.apache.kafka.tools.AclCommand;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 26: knockwatch on a company's Kafka. The broker's client listener is SASL_SSL (SCRAM-SHA-512
 * users, a self-signed certificate made here with keytool) and Kafka's StandardAuthorizer allows
 * only the ACLs docs/OPERATIONS.md lists, applied line by line with Kafka's own AclCommand. Each
 * stage runs through the launcher as its own user with relative paths: an srt line becomes a page
 * on a local webhook. Nothing listening (after --wait, 25 s), a wrong password, a plaintext client
 * and a user missing one ACL (at once, whatever --wait) each end in one line naming the address and
 * the cause; a running ingest agent whose Write right
 * is taken away stops reading, says why, and publishes the same line once the right is back; a
 * running streams whose transactions are refused stops in one line; no password is in any output.
 */
@Tag("integration")
class SecuredKafkaTest {

  static final String CMD = "SecuredKafkaTestCommand1";
  static final String CMD2 = "SecuredKafkaTestCommand2";
  static final String CMD3 = "SecuredKafkaTestCommand3";
  static final String TOKEN = "secured-kafka-test-token-0123";
  static final String STORE_PASSWORD = "store-Pa55word-d0-not-print";
  static final String WRONG = "wrong-Pa55word-d0-not-print";
  /** Each stage's user, and its password. */
  static final Map<String, String> USERS = users("admin", "ingest", "streams", "notify", "operator", "shipper",
      "ingest-raw");
  static final String CMD4 = "SecuredKafkaTestCommand4";

  @TempDir Path dir;

  @Test
  void eachStageAsItsOwnUserOnSaslSslWithOnlyTheDocumentedAcls() throws Exception {
    Path checkout = Launched.copyOfRepository(dir.resolve("checkout"));
    SelfSignedTls tls = SelfSignedTls.generate(dir.resolve("tls"), STORE_PASSWORD);
    Files.copy(tls.truststore(), checkout.resolve("truststore.p12"));
    for (Map.Entry<String, String> u : USERS.entrySet()) {
      Files.writeString(checkout.resolve(u.getKey() + ".properties"), properties(u.getKey(), u.getValue()));
    }
    Files.writeString(checkout.resolve("wrong.properties"), properties("knockwatch-ingest", WRONG));
    List<Launched> all = new ArrayList<>();
    String nobody = "127.0.0.1:" + Launched.freePort();
    // nothing listening: the default --wait (25 s) runs out while the secured broker is tried below
    Instant nothingStarted = Instant.now();
    Launched nothing = launch(all, checkout, "nothing", Map.of(), "ingest", "--bootstrap-servers", nobody,
        "--kafka-config", "knockwatch-ingest.properties", "--logs", "logs", "--var", "var-nothing");
    Instant t0;
    try (EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.startSecured(dir.resolve("kafka"), tls.keystore(),
            tls.password());
        HttpRecorder soc = new HttpRecorder();
        Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      USERS.forEach(broker::addScramUser);
      List<String> applied = applyDocumentedAcls(broker.bootstrapServers());
      assertThat(applied).as("the ACL lines of docs/OPERATIONS.md").hasSizeGreaterThanOrEqualTo(10);
      String secured = broker.securedBootstrapServers();

      t0 = Instant.now();
      Launched wrong = launch(all, checkout, "wrong", Map.of(), "topics", "--bootstrap-servers", secured,
          "--kafka-config", "wrong.properties", "--wait", "10m");
      String wrongLine = oneLine(wrong, t0);
      assertThat(wrongLine).contains(secured, "refused the login");
      assertThat(admin.listTopics().names().get()).as("nothing made with a wrong password")
          .doesNotContain(Topics.VIOLATIONS.name());

      t0 = Instant.now();
      Launched plain = launch(all, checkout, "plain", Map.of(), "topics", "--bootstrap-servers", secured,
          "--wait", "10m");
      String plainLine = oneLine(plain, t0);
      assertThat(plainLine).contains(secured, "another security.protocol than PLAINTEXT");

      Launched topics = launch(all, checkout, "topics", Map.of(), "topics", "--bootstrap-servers", secured,
          "--kafka-config", "knockwatch-admin.properties");
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
          "--bootstrap-servers", secured, "--kafka-config", "knockwatch-streams.properties",
          "--api-port", String.valueOf(Launched.freePort()), "--metrics-port", String.valueOf(Launched.freePort()));
      Launched notify = launch(all, checkout, "notify", Map.of(), "notify", "--bootstrap-servers", secured,
          "--kafka-config", "knockwatch-notify.properties", "--rules", "notify-rules", "--metrics-port",
          String.valueOf(Launched.freePort()));
      Launched ingest = launch(all, checkout, "ingest", Map.of(), "ingest", "--bootstrap-servers", secured,
          "--kafka-config", "knockwatch-ingest.properties", "--logs", "logs", "--var", "var-ingest");
      streams.awaitLine("knockwatch streams:", Duration.ofSeconds(180));
      ingest.awaitLine("knockwatch ingest:", Duration.ofSeconds(120));
      Path logs = Files.createDirectories(checkout.resolve("logs/ci-runner-1"));
      Files.writeString(logs.resolve(CMD + ".violations.jsonl"), srtLine(CMD, "exfil.example"));
      List<HttpRecorder.Request> pages = soc.await(r -> r.body().contains(CMD), 1, Duration.ofSeconds(180));
      assertThat(pages).as("the page, over SASL_SSL all the way\nnotify:\n%s\nstreams:\n%s\ningest:\n%s",
          Launched.tail(notify.err(), 20), Launched.tail(streams.err(), 20), Launched.tail(ingest.err(), 20))
          .hasSize(1);
      assertThat(pages.get(0).body()).contains("off-role-host");
      String nothingLine = oneLine(nothing, nothingStarted);
      assertThat(nothingLine).contains(nobody, "did not answer within 25 s: nothing accepted a connection");

      Launched add = launch(all, checkout, "silence-add", Map.of(), "silence", "add", "--bootstrap-servers", secured,
          "--kafka-config", "knockwatch-operator.properties", "--rule", "off-role-host", "--command", CMD,
          "--comment", "triaged");
      assertThat(add.awaitExit(Duration.ofSeconds(60))).as(add.err()).isZero();
      Launched list = launch(all, checkout, "silence-list", Map.of(), "silence", "list", "--bootstrap-servers",
          secured, "--kafka-config", "knockwatch-operator.properties");
      assertThat(list.awaitExit(Duration.ofSeconds(60))).as(list.err()).isZero();
      assertThat(list.out()).contains(CMD, "triaged");

      // with your shipper: the shipper's user writes a raw line, the stage's user turns it into the page
      Launched raw = launch(all, checkout, "ingest-raw", Map.of(), "ingest", "--raw-topic", Topics.RAW.name(),
          "--bootstrap-servers", secured, "--kafka-config", "knockwatch-ingest-raw.properties", "--logs", "raw-root",
          "--var", "var-raw");
      raw.awaitLine("knockwatch ingest: reading raw lines", Duration.ofSeconds(120));
      Properties shipperProps = new Properties();
      try (var in = Files.newBufferedReader(checkout.resolve("knockwatch-shipper.properties"))) {
        shipperProps.load(in);
      }
      shipperProps.put("ssl.truststore.location", checkout.resolve("truststore.p12").toString());
      shipperProps.put("bootstrap.servers", secured);
      String rawPath = checkout.resolve("raw-root/ci-runner-1/" + CMD4 + ".violations.jsonl").toString();
      try (KafkaProducer<String, String> shipper = new KafkaProducer<>(shipperProps, new StringSerializer(),
          new StringSerializer())) {
        shipper.send(new ProducerRecord<>(Topics.RAW.name(), rawPath, "{\"line\":" + Json.MAPPER.writeValueAsString(
            srtLine(CMD4, "fourth.example").strip()) + ",\"path\":" + Json.MAPPER.writeValueAsString(rawPath)
            + ",\"host\":\"sandbox-1\",\"offset\":0}")).get(60, TimeUnit.SECONDS);
      }
      List<HttpRecorder.Request> shipped = soc.await(r -> r.body().contains(CMD4), 1, Duration.ofSeconds(180));
      assertThat(shipped).as("the shipped line's page, over SASL_SSL with the documented ACLs\n%s",
          Launched.tail(raw.err(), 20)).hasSize(1);

      // ingest's Write right taken away while it runs: it stops reading and says why; a new agent
      // will not start without it
      AclBinding write = new AclBinding(new ResourcePattern(ResourceType.TOPIC, Topics.VIOLATIONS.name(),
          PatternType.LITERAL), new AccessControlEntry("User:knockwatch-ingest", "*", AclOperation.WRITE,
          AclPermissionType.ALLOW));
      assertThat(admin.deleteAcls(List.of(filter(write))).all().get(30, TimeUnit.SECONDS)).hasSize(1);
      Files.writeString(logs.resolve(CMD2 + ".violations.jsonl"), srtLine(CMD2, "second.example"));
      String said = ingest.awaitLogLine("reading stopped", Duration.ofSeconds(90));
      assertThat(said).contains("knockwatch.violations").containsIgnoringCase("authoriz");

      t0 = Instant.now();
      Launched noWrite = launch(all, checkout, "no-write", Map.of(), "ingest", "--bootstrap-servers", secured,
          "--kafka-config", "knockwatch-ingest.properties", "--logs", "logs", "--var", "var-ingest-2",
          "--wait", "10m");
      String noWriteLine = oneLine(noWrite, t0);
      assertThat(noWriteLine).contains(secured, "knockwatch-ingest Write on topic " + Topics.VIOLATIONS.name());

      admin.createAcls(List.of(write)).all().get(30, TimeUnit.SECONDS);
      List<HttpRecorder.Request> second = soc.await(r -> r.body().contains(CMD2), 1, Duration.ofSeconds(180));
      assertThat(second).as("the line read while the right was gone, published once it is back\n%s",
          Launched.tail(ingest.err(), 20)).hasSize(1);

      // detection's transactions refused while it runs: it stops, in one line, and so does the command
      AclBinding transactions = new AclBinding(new ResourcePattern(ResourceType.TRANSACTIONAL_ID, "knockwatch-streams",
          PatternType.PREFIXED), new AccessControlEntry("User:knockwatch-streams", "*", AclOperation.WRITE,
          AclPermissionType.ALLOW));
      assertThat(admin.deleteAcls(List.of(filter(transactions))).all().get(30, TimeUnit.SECONDS)).hasSize(1);
      t0 = Instant.now();
      Files.writeString(logs.resolve(CMD3 + ".violations.jsonl"), srtLine(CMD3, "third.example"));
      String streamsLine = oneLine(streams, t0);
      assertThat(streamsLine).contains(secured, "TransactionalIdAuthorizationException");

      for (Launched l : all) {
        String output = l.out() + l.err();
        assertThat(output).doesNotContain(WRONG, STORE_PASSWORD);
        USERS.values().forEach(p -> assertThat(output).doesNotContain(p));
      }
      System.out.printf("SecuredKafkaTest: %d ACL lines of docs/OPERATIONS.md applied%n", applied.size());
      System.out.printf("SecuredKafkaTest: nothing listening: %s%n", nothingLine);
      System.out.printf("SecuredKafkaTest: wrong password: %s%n", wrongLine);
      System.out.printf("SecuredKafkaTest: plaintext client: %s%n", plainLine);
      System.out.printf("SecuredKafkaTest: missing Write: %s%n", noWriteLine);
      System.out.printf("SecuredKafkaTest: running agent: %s%n", said);
      System.out.printf("SecuredKafkaTest: running streams: %s%n", streamsLine);
    } finally {
      all.forEach(Launched::close);
    }
  }

  /**
   * The process exits 1 with exactly one {@code knockwatch:} line, which it returns. How long it
   * took is printed, not asserted (a noisy machine); a refusal is run with {@code --wait 10m}, so
   * an exit within this test's minute and a half shows it did not wait for Kafka to change its mind.
   */
  private static String oneLine(Launched l, Instant started) throws Exception {
    assertThat(l.awaitExit(Duration.ofSeconds(90))).as(l.err()).isEqualTo(1);
    Duration took = Duration.between(started, Instant.now());
    List<String> lines = l.err().lines().filter(s -> s.startsWith("knockwatch:")).toList();
    assertThat(lines).as(l.err()).hasSize(1);
    System.out.printf("SecuredKafkaTest: one line after %.1f s%n", took.toMillis() / 1000.0);
    return lines.get(0);
  }

  /**
   * Runs each {@code kafka-acls.sh} line of docs/OPERATIONS.md's ACL block through Kafka's own
   * AclCommand, against the broker's plaintext listener (the test's admin) instead of
   * {@code "$KAFKA"} with {@code admin.properties}.
   */
  private static List<String> applyDocumentedAcls(String adminBootstrap) throws Exception {
    String doc = Files.readString(Launched.REPO.resolve("docs/OPERATIONS.md"));
    int from = doc.indexOf("### The ACLs of each stage");
    assertThat(from).as("docs/OPERATIONS.md has its ACL section").isNotNegative();
    // every sh block of the section: each stage's, then the shipper's and the raw stage's
    String section = doc.substring(from, doc.indexOf("\n## ", from) < 0 ? doc.length() : doc.indexOf("\n## ", from));
    List<String> lines = new ArrayList<>();
    for (int start = section.indexOf("```sh"); start >= 0; start = section.indexOf("```sh", start + 5)) {
      int end = section.indexOf("```", start + 5);
      section.substring(start, end).lines().filter(l -> l.startsWith("kafka-acls.sh ")).forEach(lines::add);
      start = end;
    }
    Exit.setExitProcedure((code, message) -> {
      if (code != 0) {
        throw new IllegalStateException("kafka-acls.sh exited " + code + ": " + message);
      }
    });
    try {
      for (String line : lines) {
        List<String> args = new ArrayList<>(Arrays.asList(line.substring("kafka-acls.sh ".length()).split(" +")));
        int config = args.indexOf("--command-config");
        args.remove(config + 1);
        args.remove(config);
        args.set(args.indexOf("\"$KAFKA\""), adminBootstrap);
        AclCommand.main(args.toArray(new String[0]));
      }
    } finally {
      Exit.resetExitProcedure();
    }
    return lines;
  }

  private static AclBindingFilter filter(AclBinding b) {
    return new AclBindingFilter(b.pattern().toFilter(), new AccessControlEntryFilter(b.entry().principal(),
        b.entry().host(), b.entry().operation(), b.entry().permissionType()));
  }

  private static Map<String, String> users(String... stages) {
    Map<String, String> u = new LinkedHashMap<>();
    for (String s : stages) {
      u.put("knockwatch-" + s, s + "-Pa55word-d0-not-print");
    }
    return u;
  }

  private static String srtLine(String command, String host) {
    return "{\"line\":\"deny network-outbound " + host + ":443 (host is not on the allow list)\","
        + "\"commandId\":\"" + command + "\",\"timestamp\":\"" + Instant.now() + "\"}\n";
  }

  private static Launched launch(List<Launched> all, Path checkout, String name, Map<String, String> env,
      String... args) throws Exception {
    Launched l = Launched.start(checkout, checkout.resolve("out-" + name), env, args);
    all.add(l);
    return l;
  }

  /** A company cluster's client settings, as Kafka's own --command-config: SCRAM over TLS, a relative truststore. */
  private static String properties(String user, String password) {
    return """
        security.protocol=SASL_SSL
        sasl.mechanism=SCRAM-SHA-512
        sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\
            username="%s" password="%s";
        ssl.truststore.location=truststore.p12
        ssl.truststore.type=PKCS12
        ssl.truststore.password=%s
        """.formatted(user, password, STORE_PASSWORD);
  }
}
