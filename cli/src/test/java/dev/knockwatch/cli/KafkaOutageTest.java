package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.broker.EmbeddedKafkaBroker;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 25: say what is wrong while it is wrong. {@code ./knockwatch ingest} and {@code ./knockwatch
 * notify}, as the launcher runs them, on a broker that then stops: each logs within seconds that
 * Kafka does not answer and what waits, ingest's {@code knockwatch_ingest_kafka_up} reads 0; when
 * the broker is back on the same port and data, each says so once and the gauge reads 1 again.
 */
@Tag("integration")
class KafkaOutageTest {

  @TempDir Path dir;

  @Test
  void ingestAndNotifySayKafkaIsGoneWhileItIsAndOnceWhenItIsBack() throws Exception {
    Path checkout = Launched.copyOfRepository(dir.resolve("checkout"));
    int port = Launched.freePort();
    int metrics = Launched.freePort();
    EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(dir.resolve("kafka"), port);
    broker.createTopics();
    String bootstrap = broker.bootstrapServers();
    try (Launched ingest = Launched.start(checkout, dir.resolve("ingest"), Map.of(), "ingest",
        "--bootstrap-servers", bootstrap, "--metrics-port", String.valueOf(metrics));
        Launched notify = Launched.start(checkout, dir.resolve("notify"), Map.of(), "notify",
            "--bootstrap-servers", bootstrap, "--metrics-port", String.valueOf(Launched.freePort()))) {
      ingest.awaitLine("knockwatch ingest:", Duration.ofSeconds(120));
      notify.awaitLine("knockwatch notify:", Duration.ofSeconds(120));
      assertThat(FloodFairnessTest.scrape(metrics)).contains("knockwatch_ingest_kafka_up 1.0");

      broker.close();
      Instant stopped = Instant.now();
      await(() -> ingest.err().contains("ingest: Kafka at " + bootstrap + " does not answer")
          && notify.err().contains("notify: Kafka at " + bootstrap + " does not answer"), ingest, notify);
      System.out.printf("KafkaOutageTest: both said Kafka is gone %.1f s after it stopped%n",
          Duration.between(stopped, Instant.now()).toMillis() / 1e3);
      assertThat(ingest.err()).containsPattern("waiting: [0-9,]+ bytes of logs not read yet");
      assertThat(notify.err()).contains("waiting: 0 notifications queued");
      await(() -> scrapeOrEmpty(metrics).contains("knockwatch_ingest_kafka_up 0.0"), ingest, notify);

      broker = EmbeddedKafkaBroker.start(dir.resolve("kafka"), port);
      await(() -> ingest.err().contains("ingest: Kafka at " + bootstrap + " answers again")
          && notify.err().contains("notify: Kafka at " + bootstrap + " answers again"), ingest, notify);
      await(() -> scrapeOrEmpty(metrics).contains("knockwatch_ingest_kafka_up 1.0"), ingest, notify);
      assertThat(ingest.err().split("answers again", -1)).hasSize(2); // once
      assertThat(ingest.err().split("does not answer \\(since", -1)).hasSize(2); // once, then once a minute
    } finally {
      broker.close();
    }
  }

  private static String scrapeOrEmpty(int port) {
    try {
      return FloodFairnessTest.scrape(port);
    } catch (Exception e) {
      return "";
    }
  }

  private static void await(BooleanSupplier done, Launched ingest, Launched notify) throws InterruptedException {
    Instant deadline = Instant.now().plus(Duration.ofSeconds(60));
    while (!done.getAsBoolean()) {
      if (Instant.now().isAfter(deadline)) {
        throw new AssertionError("not within 60 s\ningest stderr:\n" + Launched.tail(ingest.err(), 30)
            + "\nnotify stderr:\n" + Launched.tail(notify.err(), 30));
      }
      Thread.sleep(200);
    }
  }
}
