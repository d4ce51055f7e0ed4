package dev.knockwatch.notify;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Topics;
import io.prometheus.client.Counter;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.errors.RecordDeserializationException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads committed alerts from {@code knockwatch.alerts} and hands each to every notifier;
 * offsets are committed after delivery, so an alert is delivered at least once.
 */
public final class AlertDispatcher implements Runnable, AutoCloseable {

  public static final String DEFAULT_GROUP_ID = "knockwatch-notify";
  private static final Logger log = LoggerFactory.getLogger(AlertDispatcher.class);
  static final Counter NOTIFICATIONS = Counter.build()
      .name("knockwatch_notify_notifications_total").help("Notifications by receiver and outcome.")
      .labelNames("receiver", "outcome").register();

  static final Counter SKIPPED = Counter.build()
      .name("knockwatch_notify_unreadable_alerts_total").help("Values on the alerts topic that are not alerts (skipped).")
      .register();

  private final KafkaConsumer<String, Alert> consumer;
  private final List<Notifier> notifiers;
  private volatile boolean running = true;
  private volatile Thread thread;

  public AlertDispatcher(String bootstrapServers, String groupId, Map<String, Object> clientProps,
      List<Notifier> notifiers) {
    Map<String, Object> p = new HashMap<>(clientProps);
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    p.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    this.consumer = new KafkaConsumer<>(p, new StringDeserializer(), Json.serde(Alert.class).deserializer());
    this.notifiers = List.copyOf(notifiers);
  }

  @Override
  public void run() {
    thread = Thread.currentThread();
    try {
      consumer.subscribe(List.of(Topics.ALERTS.name()));
      while (running) {
        ConsumerRecords<String, Alert> records;
        try {
          records = consumer.poll(Duration.ofMillis(200));
        } catch (RecordDeserializationException e) {
          // One value that is not an alert must not stop every later page: skip it, loudly.
          SKIPPED.inc();
          log.error("skipping a value on {} partition {} offset {} that is not an Alert: {}",
              e.topicPartition().topic(), e.topicPartition().partition(), e.offset(), e.getMessage());
          consumer.seek(e.topicPartition(), e.offset() + 1);
          continue;
        }
        for (ConsumerRecord<String, Alert> r : records) {
          if (r.value() != null) {
            deliver(r.value());
          }
        }
        if (!records.isEmpty()) {
          consumer.commitSync();
        }
      }
    } catch (WakeupException e) {
      if (running) {
        throw e;
      }
    } finally {
      consumer.close(Duration.ofSeconds(5));
    }
  }

  private void deliver(Alert alert) {
    if (Boolean.TRUE.equals(alert.shadow())) {
      // a shadow-mode rule: written to knockwatch.alerts and counted, never paged
      notifiers.forEach(n -> NOTIFICATIONS.labels(n.name(), "shadow").inc());
      return;
    }
    for (Notifier n : notifiers) {
      Notifier.Result result;
      try {
        result = n.notify(alert);
      } catch (RuntimeException e) {
        result = Notifier.Result.failed(false, e.getClass().getSimpleName());
      }
      NOTIFICATIONS.labels(n.name(), result.delivered() ? "sent" : "gave-up").inc();
      if (!result.delivered()) {
        log.warn("receiver {} did not take alert {}: {}", n.name(), alert.fingerprint(), result.detail());
      }
    }
  }

  @Override
  public void close() {
    running = false;
    Thread t = thread;
    if (t == null) {
      consumer.close(Duration.ofSeconds(5));
      return;
    }
    consumer.wakeup();
    if (t != Thread.currentThread()) {
      try {
        t.join(10_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
