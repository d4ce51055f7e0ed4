package dev.knockwatch.broker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Waiting for Kafka: nothing listening is waited for (a broker may be starting), to the end; a
 * listener that hangs up on every request (a SASL or TLS one, for a plaintext client) ends the
 * wait early, saying so.
 */
@Tag("integration")
class AwaitReadyTest {

  @TempDir Path dir;

  @Test
  void nothingListeningIsWaitedForToTheEnd() {
    int port = EmbeddedKafkaBroker.freePorts(1, 0)[0];
    assertThatThrownBy(() -> TopicCreator.awaitReady("127.0.0.1:" + port, Map.of(), Duration.ofSeconds(15)))
        .hasMessageContaining("did not answer within 15 s: nothing accepted a connection there");
  }

  @Test
  void aListenerThatHangsUpEndsTheWaitWithItsCause() {
    try (EmbeddedKafkaBroker b = EmbeddedKafkaBroker.startWithSasl(dir, Map.of("u", "p"))) {
      long t0 = System.nanoTime();
      assertThatThrownBy(() -> TopicCreator.awaitReady(b.saslBootstrapServers(), Map.of(), Duration.ofSeconds(120)))
          .hasMessageContaining("another security.protocol than PLAINTEXT").hasMessageContaining(b.saslBootstrapServers());
      System.out.printf("AwaitReadyTest: a plaintext client on a SASL listener gave up after %.1f s%n",
          (System.nanoTime() - t0) / 1e9);
      TopicCreator.awaitReady(b.bootstrapServers(), Map.of(), Duration.ofSeconds(30)); // the plaintext one answers
    }
  }
}
