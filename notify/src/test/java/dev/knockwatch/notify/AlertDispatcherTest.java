package dev.knockwatch.notify;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Topics;
import dev.knockwatch.notify.config.Receiver;
import dev.knockwatch.notify.config.ReceiversConfig;
import dev.knockwatch.notify.config.Route;
import dev.knockwatch.notify.pipeline.Backoff;
import dev.knockwatch.testkit.EmbeddedKafkaExtension;
import java.time.Duration;
import java.util.Set;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
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

  @Test
  void aValueThatIsNotAnAlertIsSkippedShadowAlertsAreNotPagedAndTheAlertsAfterThemAreDelivered(EmbeddedKafkaBroker broker) throws Exception {
    Instant t0 = Instant.parse("2026-11-29T18:45:00Z");
    Alert alert = new Alert("f1", "persistent-retry", Alert.Severity.WARNING, Alert.Status.FIRING,
        "AlertDispatcherTest000001", "a", null, null, null, 5, t0, t0.plusSeconds(300), t0, t0, "s", List.of(), null, null, null);
    try (KafkaProducer<String, String> p = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
        broker.bootstrapServers()), new StringSerializer(), new StringSerializer())) {
      p.send(new ProducerRecord<>(Topics.ALERTS.name(), 0, "f0", "{not an alert")).get(30, TimeUnit.SECONDS);
      Alert shadow = new Alert("fs", "trial-rule", Alert.Severity.PAGE, Alert.Status.FIRING,
          "AlertDispatcherTest000002", "a", null, null, null, 1, null, null, t0, t0, "s", List.of(), null, null, true);
      p.send(new ProducerRecord<>(Topics.ALERTS.name(), 0, "fs", Json.write(shadow))).get(30, TimeUnit.SECONDS);
      p.send(new ProducerRecord<>(Topics.ALERTS.name(), 0, "f1", Json.write(alert))).get(30, TimeUnit.SECONDS);
    }
    Recording recording = new Recording();
    double skippedBefore = NotifyMetrics.SKIPPED.get();
    ReceiversConfig config = new ReceiversConfig(List.of(new Receiver.Console("recording")), List.of(new Route(Set.of(),
        List.of(), Set.of(), List.of(), List.of("recording"), false, List.of(), Duration.ZERO, Duration.ZERO)), null);
    AlertDispatcher dispatcher = new AlertDispatcher(broker.bootstrapServers(), "dispatcher-test", Map.of(), config,
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
}
