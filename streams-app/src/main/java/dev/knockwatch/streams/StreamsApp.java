package dev.knockwatch.streams;

import dev.knockwatch.streams.rules.CountRule;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.kafka.streams.KafkaStreams;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Runs the detection topology: start, wait until it processes, close cleanly. */
public final class StreamsApp implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(StreamsApp.class);
  private final KafkaStreams streams;

  public StreamsApp(String applicationId, String bootstrapServers, Path stateDir, List<CountRule> rules,
      Map<String, Object> clientProps) {
    this.streams = new KafkaStreams(DetectionTopology.buildTopology(rules),
        DetectionTopology.streamsConfig(applicationId, bootstrapServers, stateDir, clientProps));
    streams.setUncaughtExceptionHandler(e -> {
      log.error("detection stopped on an error; replacing the stream thread", e);
      return org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
    });
  }

  /** Starts and waits until the app is RUNNING (tasks assigned, state restored). */
  public StreamsApp start(Duration timeout) {
    streams.start();
    Instant deadline = Instant.now().plus(timeout);
    while (streams.state() != KafkaStreams.State.RUNNING) {
      if (Instant.now().isAfter(deadline) || !streams.state().isRunningOrRebalancing()) {
        throw new IllegalStateException("Kafka Streams did not reach RUNNING within " + timeout.toSeconds()
            + " s (state " + streams.state() + ")");
      }
      sleep(50);
    }
    return this;
  }

  public KafkaStreams.State state() {
    return streams.state();
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  /** Commits what was processed and closes the state stores. */
  @Override
  public void close() {
    streams.close(Duration.ofSeconds(30));
  }
}
