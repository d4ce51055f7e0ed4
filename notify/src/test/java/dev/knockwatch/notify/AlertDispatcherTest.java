package dev.knockwatch.notify;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Topics;
import dev.knockwatch.notify.console.ConsoleReceiver;
import dev.knockwatch.notify.slack.SlackReceiver;
import dev.knockwatch.notify.config.ReceiversConfig;
import dev.knockwatch.notify.config.Matcher;
import dev.knockwatch.notify.config.Route;
import dev.knockwatch.notify.pipeline.Backoff;
import dev.knockwatch.events.Glob;
import dev.knockwatch.notify.pipeline.NotifyMetrics;
import dev.knockwatch.notify.spi.Notification;
import dev.knockwatch.notify.spi.Notifier;
import dev.knockwatch.notify.spi.Secret;
import dev.knockwatch.testkit.EmbeddedKafkaExtension;
import dev.knockwatch.testkit.HttpRecorder;
import java.time.Duration;
import java.util.Set;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@Tag("integration")
@ExtendWith(EmbeddedKafkaExtension.class)
class AlertDispatcherTest {

  /** Records what it is given. */
  static final class Recording implements Notifier {
    final List<Alert> got = new CopyOnWriteArrayList<>();

    @Override
    public String name() {
      return "recording";
    }

    @Override
    public Result notify(Notification n) {
      got.addAll(n.alerts());
      return Result.ok();
    }
  }

  /** A root over one route: what {@code matcher} matches goes to {@code receiver}, no grouping. */
  static Route route(String matcher, String receiver, Duration repeatInterval) {
    return Route.root(List.of(new Route(List.of(Matcher.parse(matcher)), List.of(receiver), false, List.of(),
        Duration.ZERO, Duration.ZERO, repeatInterval, List.of())));
  }

  @Test
  void aValueThatIsNotAnAlertIsSkippedShadowAlertsAreNotPagedAndTheAlertsAfterThemAreDelivered(EmbeddedKafkaBroker broker) throws Exception {
    Instant t0 = Instant.parse("2026-11-29T18:45:00Z");
    Alert alert = Alert.firing("persistent-retry", "AlertDispatcherTest000001").fingerprint("f1").agentId("a")
        .count(5).windowStart(t0).windowEnd(t0.plusSeconds(300)).firstSeen(t0).lastSeen(t0).summary("s")
        .sampleEventIds(List.of()).build();
    try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
        broker.bootstrapServers()), new StringSerializer(), new StringSerializer())) {
      p.send(new ProducerRecord<>(Topics.ALERTS.name(), 0, "f0", "{not an alert")).get(30, TimeUnit.SECONDS);
      Alert shadow = Alert.firing("trial-rule", "AlertDispatcherTest000002").fingerprint("fs")
          .severity(Alert.Severity.PAGE).agentId("a").firstSeen(t0).lastSeen(t0).summary("s")
          .sampleEventIds(List.of()).shadow(true).build();
      p.send(new ProducerRecord<>(Topics.ALERTS.name(), 0, "fs", Json.write(shadow))).get(30, TimeUnit.SECONDS);
      p.send(new ProducerRecord<>(Topics.ALERTS.name(), 0, "f1", Json.write(alert))).get(30, TimeUnit.SECONDS);
    }
    Recording recording = new Recording();
    double skippedBefore = NotifyMetrics.SKIPPED.get();
    // only this test's rules: the broker, and its alerts topic, serve the whole class
    ReceiversConfig config = new ReceiversConfig(List.of(new ConsoleReceiver("recording")), route("rule=~\"persistent-retry|trial-rule\"",
        "recording", Duration.ZERO), null);
    AlertDispatcher dispatcher = new AlertDispatcher(broker.bootstrapServers(), "dispatcher-test", null, Map.of(), config,
        List.of(recording), Backoff.DEFAULT);
    Thread t = new Thread(dispatcher);
    t.start();
    try {
      Instant deadline = Instant.now().plusSeconds(60);
      while (recording.got.isEmpty() && Instant.now().isBefore(deadline)) {
        Thread.sleep(50);
      }
    } finally {
      dispatcher.close();
    }
    assertThat(recording.got).containsExactly(alert);
    assertThat(NotifyMetrics.SKIPPED.get() - skippedBefore).isEqualTo(1.0);
  }

  /**
   * {@code up}'s notifier is a static member of its group (its id kept in var/): stopped, it still
   * leaves at once, so its partitions go to the others now, and {@code topics --grow-to} finds the
   * group empty rather than holding the member for its 45 s session.
   */
  @Test
  void aStaticMemberStoppedLeavesItsGroupAtOnce(EmbeddedKafkaBroker broker) throws Exception {
    ReceiversConfig config = new ReceiversConfig(List.of(new ConsoleReceiver("recording")), route("rule=~\"none\"",
        "recording", Duration.ZERO), null);
    AlertDispatcher dispatcher = new AlertDispatcher(broker.bootstrapServers(), "static-leave-test", "notify-instance-1",
        Map.of(), config, List.of(new Recording()), Backoff.DEFAULT);
    Thread t = new Thread(dispatcher);
    t.start();
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers()))) {
      Instant deadline = Instant.now().plusSeconds(60);
      while (members(admin, "static-leave-test") == 0) {
        assertThat(Instant.now()).as("the notifier joined its group").isBefore(deadline);
        Thread.sleep(100);
      }
      Instant stopping = Instant.now();
      dispatcher.close();
      t.join(30_000);
      while (members(admin, "static-leave-test") > 0) {
        assertThat(Duration.between(stopping, Instant.now())).as("still a member after its stop")
            .isLessThan(Duration.ofSeconds(30));
        Thread.sleep(100);
      }
    }
  }

  private static int members(Admin admin, String group) throws Exception {
    return admin.describeConsumerGroups(List.of(group)).all().get(30, TimeUnit.SECONDS).get(group).members().size();
  }

  @Test
  void aNotifierStoppedMidWayAndStartedAgainWithoutItsOffsetsSendsNothingTwice(EmbeddedKafkaBroker broker) throws Exception {
    Instant t0 = Instant.parse("2026-11-29T19:00:00Z");
    int n = 60;
    try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
        broker.bootstrapServers()), new StringSerializer(), new StringSerializer())) {
      for (int i = 0; i < n; i++) {
        Alert a = Alert.firing("off-role-host", String.format("RestartRestartRestart%03d", i))
            .fingerprint(String.format("restart%09d", i)).severity(Alert.Severity.PAGE).agentId("ci-1").role("ci")
            .host("evil.example").port(443).firstSeen(t0).lastSeen(t0).summary("s").sampleEventIds(List.of())
            .build();
        p.send(new ProducerRecord<>(Topics.ALERTS.name(), a.fingerprint(), Json.write(a)));
      }
      p.flush();
    }
    try (HttpRecorder slack = new HttpRecorder()) {
      ReceiversConfig config = new ReceiversConfig(List.of(new SlackReceiver("soc-slack",
          new dev.knockwatch.notify.spi.Secret(slack.url("/hook")), null, null, slack.url("/api/"), Duration.ofMillis(40))),
          route("rule=\"off-role-host\"", "soc-slack", Duration.ofMinutes(5)), null);
      AlertDispatcher first = new AlertDispatcher(broker.bootstrapServers(), "restart-test", null, Map.of(), config,
          Notifiers.create(config, System.out), Backoff.DEFAULT);
      new Thread(first).start();
      slack.await(r -> true, 15, Duration.ofSeconds(60));
      first.close();
      int sentBefore = slack.requests().size();
      assertThat(sentBefore).isBetween(15, n - 1);

      // a new group: as if the first had died before committing a single offset, so every alert
      // is read again and only the notification log can tell what was sent
      AlertDispatcher second = new AlertDispatcher(broker.bootstrapServers(), "restart-test-lost-offsets", null, Map.of(), config,
          Notifiers.create(config, System.out), Backoff.DEFAULT);
      new Thread(second).start();
      try {
        slack.await(r -> true, n, Duration.ofSeconds(60));
        Thread.sleep(500); // a duplicate would come now
      } finally {
        second.close();
      }
      Map<String, Long> perAlert = slack.requests().stream()
          .map(r -> r.body().replaceAll("(?s).*fingerprint `(restart\\d+)`.*", "$1"))
          .collect(java.util.stream.Collectors.groupingBy(f -> f, java.util.stream.Collectors.counting()));
      assertThat(perAlert).hasSize(n).allSatisfy((f, count) -> assertThat(count).as(f).isEqualTo(1L));
    }
  }

  @Test
  void anActiveSilenceMutesWhatItMatchesAndIsRecordedAndAnExpiredOneNoLonger(EmbeddedKafkaBroker broker) throws Exception {
    Instant t0 = Instant.parse("2026-11-29T21:00:00Z");
    Instant now = Instant.now();
    dev.knockwatch.notify.silence.Silences.write(broker.bootstrapServers(), Map.of(), new dev.knockwatch.events.Silence("quiet-1",
        Map.of("rule", "muted-rule"), now.minusSeconds(60), now.plusSeconds(3600), "ana", "maintenance"));
    dev.knockwatch.notify.silence.Silences.write(broker.bootstrapServers(), Map.of(), new dev.knockwatch.events.Silence("over-1",
        Map.of("rule", "loud-rule"), now.minusSeconds(7200), now.minusSeconds(3600), "ana", "old"));
    Alert muted = Alert.firing("muted-rule", "SilenceSilenceSilence1").fingerprint("muted0000000001")
        .severity(Alert.Severity.PAGE).agentId("a").firstSeen(t0).lastSeen(t0).summary("s")
        .sampleEventIds(List.of()).build();
    Alert loud = Alert.firing("loud-rule", "SilenceSilenceSilence2").fingerprint("loud00000000001")
        .severity(Alert.Severity.PAGE).agentId("a").firstSeen(t0).lastSeen(t0).summary("s")
        .sampleEventIds(List.of()).build();
    try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
        broker.bootstrapServers()), new StringSerializer(), new StringSerializer())) {
      p.send(new ProducerRecord<>(Topics.ALERTS.name(), muted.fingerprint(), Json.write(muted))).get(30, TimeUnit.SECONDS);
      p.send(new ProducerRecord<>(Topics.ALERTS.name(), loud.fingerprint(), Json.write(loud))).get(30, TimeUnit.SECONDS);
    }
    Recording recording = new Recording();
    ReceiversConfig config = new ReceiversConfig(List.of(new ConsoleReceiver("recording")), route("rule=~\"muted-rule|loud-rule\"",
        "recording", Duration.ZERO), null);
    AlertDispatcher dispatcher = new AlertDispatcher(broker.bootstrapServers(), "silence-test", null, Map.of(), config,
        List.of(recording), Backoff.DEFAULT);
    new Thread(dispatcher).start();
    try {
      Instant deadline = Instant.now().plusSeconds(60);
      // the class's tests share the alerts topic, and this dispatcher reads all of it
      long all = dev.knockwatch.testkit.TopicReader.recordCount(broker, Topics.ALERTS.name());
      while (dispatcher.committedRecords() < all && Instant.now().isBefore(deadline)) {
        Thread.sleep(50);
      }
    } finally {
      dispatcher.close();
    }
    assertThat(recording.got).containsExactly(loud);
    List<String> log = dev.knockwatch.testkit.TopicReader.readToEnd(broker, Topics.NOTIFICATIONS.name(),
        new org.apache.kafka.common.serialization.StringDeserializer(), r -> true).stream().map(r -> r.value()).toList();
    assertThat(log).anySatisfy(v -> assertThat(v).contains("\"key\":\"muted0000000001\"", "\"outcome\":\"silenced\"",
        "silence quiet-1"));
  }

  /**
   * The shipped inhibition's shape over the real alerts topic (rule names of this test only: the
   * topic serves the whole class): one page for an incident, not a page and a warning.
   */
  @Test
  void anOffRolePageInhibitsTheRetryWarningOfItsCommandOnly(EmbeddedKafkaBroker broker) throws Exception {
    Instant t0 = Instant.parse("2026-11-29T20:00:00Z");
    Alert page = Alert.firing("inhibit-test-off-role", "InhibitInhibitInhibit01")
        .fingerprint(Alert.fingerprintOf("inhibit-test-off-role", "InhibitInhibitInhibit01"))
        .severity(Alert.Severity.PAGE).agentId("ci-1").role("ci").host("evil.example").port(443).firstSeen(t0)
        .lastSeen(t0).summary("s").sampleEventIds(List.of()).build();
    Alert retry = Alert.firing("inhibit-test-retry", "InhibitInhibitInhibit01")
        .fingerprint(Alert.fingerprintOf("inhibit-test-retry", "InhibitInhibitInhibit01")).agentId("ci-1")
        .role("ci").count(5).windowStart(t0).windowEnd(t0.plusSeconds(300)).firstSeen(t0).lastSeen(t0).summary("s")
        .sampleEventIds(List.of()).build();
    Alert otherRetry = Alert.firing("inhibit-test-retry", "InhibitInhibitInhibit02")
        .fingerprint(Alert.fingerprintOf("inhibit-test-retry", "InhibitInhibitInhibit02")).agentId("ci-1")
        .role("ci").count(5).windowStart(t0).windowEnd(t0.plusSeconds(300)).firstSeen(t0).lastSeen(t0).summary("s")
        .sampleEventIds(List.of()).build();
    try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
        broker.bootstrapServers()), new StringSerializer(), new StringSerializer())) {
      for (Alert a : List.of(page, retry, otherRetry)) {
        p.send(new ProducerRecord<>(Topics.ALERTS.name(), a.commandId(), Json.write(a))).get(30, TimeUnit.SECONDS);
      }
    }
    Recording recording = new Recording();
    ReceiversConfig config = new ReceiversConfig(List.of(new ConsoleReceiver("recording")), route("rule=~\"inhibit-test-off-role|inhibit-test-retry\"",
        "recording", Duration.ZERO), null, List.of(new dev.knockwatch.notify.config.InhibitRule(
            List.of(Matcher.parse("rule=\"inhibit-test-off-role\"")), List.of(Matcher.parse("rule=\"inhibit-test-retry\"")),
            List.of("command"))), Map.of());
    double inhibitedBefore = NotifyMetrics.NOTIFICATIONS.labels("recording", "inhibited").get();
    AlertDispatcher dispatcher = new AlertDispatcher(broker.bootstrapServers(), "dispatcher-inhibit-test", null, Map.of(),
        config, List.of(recording), Backoff.DEFAULT);
    Thread t = new Thread(dispatcher);
    t.start();
    try {
      Instant deadline = Instant.now().plusSeconds(60);
      // the page's send runs on its receiver's own thread: wait for it too, not only for what came after it
      while ((recording.got.stream().noneMatch(a -> a.commandId().equals(otherRetry.commandId()))
          || recording.got.stream().noneMatch(a -> a.fingerprint().equals(page.fingerprint()))
          || NotifyMetrics.NOTIFICATIONS.labels("recording", "inhibited").get() == inhibitedBefore)
          && Instant.now().isBefore(deadline)) {
        Thread.sleep(50);
      }
    } finally {
      dispatcher.close();
    }
    assertThat(recording.got).filteredOn(a -> a.commandId().startsWith("InhibitInhibitInhibit"))
        .containsExactlyInAnyOrder(page, otherRetry);
    assertThat(NotifyMetrics.NOTIFICATIONS.labels("recording", "inhibited").get() - inhibitedBefore).isEqualTo(1.0);
  }
}
