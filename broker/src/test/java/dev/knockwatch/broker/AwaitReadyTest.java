package dev.knockwatch.broker;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Waiting for Kafka: nothing listening is waited for (a broker may be starting), to the end. (A
 * listener that hangs up on every request ends the wait early: SecuredKafkaTest, through the launcher.)
 */
@Tag("integration")
class AwaitReadyTest {

  @TempDir Path dir;

  @Test
  void nothingListeningIsWaitedForToTheEnd() {
    int port = EmbeddedKafkaBroker.freePorts(1, 0)[0];
    assertThatThrownBy(() -> TopicCreator.awaitReady("127.0.0.1:" + port, Map.of(), Duration.ofSeconds(3)))
        .hasMessageContaining("did not answer within 3 s: nothing accepted a connection there");
  }
}
