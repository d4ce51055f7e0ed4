package dev.knockwatch.notify;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Glob;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Topics;
import dev.knockwatch.notify.config.ReceiversConfig;
import dev.knockwatch.notify.config.Matcher;
import dev.knockwatch.notify.config.Route;
import dev.knockwatch.notify.pipeline.Backoff;
import dev.knockwatch.notify.webhook.WebhookReceiver;
import dev.knockwatch.testkit.EmbeddedKafkaExtension;
import dev.knockwatch.testkit.HttpRecorder;
import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Flood control: 10,000 commands firing one rule at once make a handful of digests, not 10,000
 * posts; one command whose alert updates a thousand times within the repeat interval pages once.
 * The digests a minute later come without waiting a minute: the dispatcher's clock is skipped
 * ahead once its work of the present minute is done ({@link SkipClock}).
 */
@Tag("integration")
@ExtendWith(EmbeddedKafkaExtension.class)
class FloodTest {

  static final Instant T0 = Instant.parse("2026-11-29T20:00:00Z");

  private static Alert alert(String rule, int command, long count) {
    return alert(rule, command, count, Alert.Severity.WARNING);
  }

  private static Alert alert(String rule, int command, long count, Alert.Severity severity) {
    String id = String.format("FloodFloodFloodFl%05d", command);
    return Alert.firing(rule, id).fingerprint(Alert.fingerprintOf(rule, id)).severity(severity).agentId("ci-1")
        .role("ci").host("evil.example").port(443).count(count).windowStart(T0).windowEnd(T0.plusSeconds(300))
        .firstSeen(T0).lastSeen(T0.plusSeconds(count)).summary("refused " + count + " times")
        .sampleEventIds(List.of()).build();
  }

  private static void publish(EmbeddedKafkaBroker broker, List<Alert> alerts) {
    try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
        broker.bootstrapServers(), ProducerConfig.LINGER_MS_CONFIG, 20), new StringSerializer(), new StringSerializer())) {
      alerts.forEach(a -> p.send(new ProducerRecord<>(Topics.ALERTS.name(), a.fingerprint(), Json.write(a))));
      p.flush();
    }
  }

  /** The machine's monotonic clock, plus whatever the test skipped ahead. */
  static final class SkipClock implements java.util.function.LongSupplier {
    private final java.util.concurrent.atomic.AtomicLong skipped = new java.util.concurrent.atomic.AtomicLong();

    @Override
    public long getAsLong() {
      return System.nanoTime() + skipped.get();
    }

    void skip(Duration d) {
      skipped.addAndGet(d.toNanos());
    }
  }

  private final SkipClock clock = new SkipClock();

  /** A dispatcher sending the alerts whose rule matches the regex {@code rule} to {@code hook}. */
  private AlertDispatcher dispatcher(EmbeddedKafkaBroker broker, String group, String rule, HttpRecorder hook,
      List<String> groupBy) {
    ReceiversConfig config = new ReceiversConfig(List.of(new WebhookReceiver("hook", URI.create(hook.url("/hook")), null)),
        Route.root(List.of(new Route(List.of(Matcher.of("rule", Matcher.Op.REGEX, rule)), List.of("hook"), false, groupBy,
            Duration.ofSeconds(2), Duration.ofSeconds(2), Duration.ofMinutes(5), List.of()))), null);
    return new AlertDispatcher(broker.bootstrapServers(), group, null, Map.of(), config, Notifiers.create(config, System.out),
        Backoff.DEFAULT, clock);
  }

  @Test
  void tenThousandCommandsFiringOneRuleMakeDigestsNotTenThousandPosts(EmbeddedKafkaBroker broker) throws Exception {
    publish(broker, java.util.stream.IntStream.range(0, 10_000).mapToObj(i -> alert("flood-wide", i, 5)).toList());
    try (HttpRecorder hook = new HttpRecorder()) {
      runToEnd(broker, dispatcher(broker, "flood-wide", "flood-wide", hook, List.of("rule")), Duration.ofSeconds(90));
      List<JsonNode> posts = hook.requests("/hook").stream().map(HttpRecorder.Request::json).toList();
      assertThat(posts.stream().mapToInt(p -> p.get("alerts").size()).sum()).isEqualTo(10_000);
      assertThat(posts).hasSizeLessThanOrEqualTo(20);
    }
  }

  @Test
  void aThousandUpdatesOfOneAlertWithinTheRepeatIntervalPageOnce(EmbeddedKafkaBroker broker) throws Exception {
    publish(broker, java.util.stream.LongStream.rangeClosed(5, 1004).mapToObj(c -> alert("flood-one", 1, c)).toList());
    try (HttpRecorder hook = new HttpRecorder()) {
      runToEnd(broker, dispatcher(broker, "flood-one", "flood-one", hook, List.of()), Duration.ofSeconds(60));
      assertThat(hook.requests("/hook")).hasSize(1);
      assertThat(hook.requests("/hook").get(0).json().get("event").asText()).isEqualTo("firing");
    }
  }

  /**
   * One command's 2,000 alerts (a rule per alert: what no detector writes, but the topic is open to
   * whatever wrote it) then another command's page: that page is among the first posts, the
   * command's first twenty go alone and the rest come as digests of it, none lost.
   */
  @Test
  void oneCommandsThousandsOfAlertsCannotBuryAnotherCommandsPage(EmbeddedKafkaBroker broker) throws Exception {
    List<Alert> flood = new java.util.ArrayList<>(java.util.stream.IntStream.range(0, 2_000)
        .mapToObj(i -> alert("bury-" + i, 7, 5)).toList());
    flood.add(alert("bury-page", 8, 1, Alert.Severity.PAGE));
    publish(broker, flood);
    try (HttpRecorder hook = new HttpRecorder()) {
      runToEnd(broker, dispatcher(broker, "flood-bury", "bury-.*", hook, List.of()), Duration.ofSeconds(150));
      List<JsonNode> posts = hook.requests("/hook").stream().map(HttpRecorder.Request::json).toList();
      int page = -1;
      for (int i = 0; i < posts.size(); i++) {
        if (posts.get(i).toString().contains("FloodFloodFloodFl00008")) {
          page = i;
        }
      }
      assertThat(page).as("the other command's page among %d posts", posts.size())
          .isBetween(0, dev.knockwatch.notify.pipeline.FloodBudget.PER_COMMAND + 1);
      assertThat(posts.stream().mapToInt(p -> p.get("alerts").size()).sum()).isEqualTo(2_001);
      assertThat(posts.size()).isLessThanOrEqualTo(dev.knockwatch.notify.pipeline.FloodBudget.PER_COMMAND + 10);
    }
  }

  /**
   * 40 warnings of 40 commands, each its own rule, on a route with no groupBy: past the receiver's
   * maxPerMinute (10) the other 30 arrive in one digest, not as 30 more posts.
   */
  @Test
  void pastAReceiversMaxPerMinuteTheRestComeAsOneDigest(EmbeddedKafkaBroker broker) throws Exception {
    publish(broker, java.util.stream.IntStream.range(0, 40).mapToObj(i -> alert("cap-" + i, 100 + i, 5)).toList());
    try (HttpRecorder hook = new HttpRecorder()) {
      ReceiversConfig config = new ReceiversConfig(List.of(new WebhookReceiver("hook", URI.create(hook.url("/hook")), null)),
          Route.root(List.of(new Route(List.of(Matcher.parse("rule=~\"cap-.*\"")), List.of("hook"), false, List.of(),
              Duration.ofSeconds(2), Duration.ofSeconds(2), Duration.ofMinutes(5), List.of()))), null, List.of(),
          Map.of("hook", 10));
      AlertDispatcher d = new AlertDispatcher(broker.bootstrapServers(), "flood-cap", null, Map.of(), config,
          Notifiers.create(config, System.out), Backoff.DEFAULT, clock);
      new Thread(d).start();
      try {
        hook.await(r -> true, 10, Duration.ofSeconds(60)); // the ten alone
        Thread.sleep(1_000); // nothing more within the minute
        assertThat(hook.requests("/hook")).hasSize(10);
        clock.skip(Duration.ofSeconds(61));
        hook.await(r -> true, 11, Duration.ofSeconds(60)); // and the digest a minute later
      } finally {
        d.close();
      }
      List<JsonNode> posts = hook.requests("/hook").stream().map(HttpRecorder.Request::json).toList();
      assertThat(posts).hasSize(11);
      assertThat(posts.subList(0, 10)).allSatisfy(p -> assertThat(p.get("alerts")).hasSize(1));
      assertThat(posts.get(10).get("alerts")).hasSize(30);
    }
  }

  /**
   * Runs the dispatcher until it has handled every record of the alerts topic so far, or the
   * timeout; whenever it has handled nothing more for a second, its clock skips a minute ahead.
   */
  private void runToEnd(EmbeddedKafkaBroker broker, AlertDispatcher d, Duration timeout) throws InterruptedException {
    new Thread(d).start();
    try {
      long deadline = System.nanoTime() + timeout.toNanos();
      long all = dev.knockwatch.testkit.TopicReader.recordCount(broker, Topics.ALERTS.name());
      long last = -1;
      long still = System.nanoTime();
      while (d.committedRecords() < all && System.nanoTime() < deadline) {
        Thread.sleep(100);
        if (d.committedRecords() != last) {
          last = d.committedRecords();
          still = System.nanoTime();
        } else if (System.nanoTime() - still > 1_000_000_000L) {
          clock.skip(Duration.ofSeconds(61));
          still = System.nanoTime();
        }
      }
    } finally {
      d.close();
    }
  }
}
