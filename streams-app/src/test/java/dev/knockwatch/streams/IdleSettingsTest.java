package dev.knockwatch.streams;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.streams.StreamsConfig;
import org.junit.jupiter.api.Test;

/**
 * What an idle {@code up} spends in the stream threads' loops and their consumers' fetches
 * (docs/PERFORMANCE.md, "up idle"), and what a page or a restart must not wait for: each app's loop
 * turns as often as it commits (a start takes its steps one turn at a time).
 */
class IdleSettingsTest {

  private static StreamsConfig of(String applicationId) {
    return new StreamsConfig(DetectionTopology.streamsConfig(applicationId, "127.0.0.1:9092", Path.of("state"), Map.of()));
  }

  @Test
  void detectionTurnsAsOftenAsItCommitsSoACommitDueWaitsNoLongerForItsPage() {
    StreamsConfig detection = of(DetectionTopology.DEFAULT_APPLICATION_ID);
    assertThat(detection.getLong(StreamsConfig.POLL_MS_CONFIG))
        .isLessThanOrEqualTo(detection.getLong(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG));
  }

  @Test
  void bothAppsCommitEveryTenthOfASecondUnlessTheirCallerSaysOtherwise() {
    for (String app : new String[] {DetectionTopology.DEFAULT_APPLICATION_ID, TimelineTopology.DEFAULT_APPLICATION_ID}) {
      assertThat(of(app).getLong(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG)).isEqualTo(100L);
    }
    StreamsConfig users = new StreamsConfig(DetectionTopology.streamsConfig(DetectionTopology.DEFAULT_APPLICATION_ID,
        "127.0.0.1:9092", Path.of("state"), Map.of(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 500)));
    assertThat(users.getLong(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG)).isEqualTo(500L);
  }

  @Test
  void theTimelineTurnsAsOftenAsItCommitsToo() {
    StreamsConfig timeline = of(TimelineTopology.DEFAULT_APPLICATION_ID);
    assertThat(timeline.getLong(StreamsConfig.POLL_MS_CONFIG))
        .isLessThanOrEqualTo(timeline.getLong(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG));
  }

  @Test
  void idleFetchesWaitTwoSecondsAtTheBrokerForDetectionFiveForTheTimelineTheGlobalConsumersTenAndARestoresKeepsTheDefault() {
    assertThat(of(DetectionTopology.DEFAULT_APPLICATION_ID).getMainConsumerConfigs("g", "c", 0))
        .containsEntry(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 2_000);
    assertThat(of(TimelineTopology.DEFAULT_APPLICATION_ID).getMainConsumerConfigs("g", "c", 0))
        .containsEntry(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 5_000);
    for (String app : new String[] {DetectionTopology.DEFAULT_APPLICATION_ID, TimelineTopology.DEFAULT_APPLICATION_ID}) {
      StreamsConfig c = of(app);
      assertThat(c.getGlobalConsumerConfigs("c")).containsEntry(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, 10_000);
      assertThat(c.getRestoreConsumerConfigs("c")).doesNotContainKey(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG);
    }
  }

  @Test
  void theMainConsumersHeartbeatEveryFiveSecondsOrAThirdOfTheUsersShorterSessionOrAtTheUsersInterval() {
    assertThat(of(DetectionTopology.DEFAULT_APPLICATION_ID).getMainConsumerConfigs("g", "c", 0))
        .containsEntry(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 5_000);
    StreamsConfig shortSession = new StreamsConfig(DetectionTopology.streamsConfig(DetectionTopology.DEFAULT_APPLICATION_ID,
        "127.0.0.1:9092", Path.of("state"), Map.of(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "6000")));
    assertThat(shortSession.getMainConsumerConfigs("g", "c", 0)).containsEntry(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 2_000);
    StreamsConfig users = new StreamsConfig(DetectionTopology.streamsConfig(DetectionTopology.DEFAULT_APPLICATION_ID,
        "127.0.0.1:9092", Path.of("state"), Map.of(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "1000")));
    assertThat(users.getMainConsumerConfigs("g", "c", 0).get(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG)).hasToString("1000");
  }

  @Test
  void aNodeThatStopsAnsweringIsGivenUpOnAfterTenSecondsByTheProducerAndTheMainConsumerUnlessTheUserSaysOtherwise() {
    StreamsConfig c = of(DetectionTopology.DEFAULT_APPLICATION_ID);
    assertThat(c.getProducerConfigs("c")).containsEntry(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
    assertThat(c.getMainConsumerConfigs("g", "c", 0)).containsEntry(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
    // the global consumer's fetch waits 10 s at the broker: its requests keep Kafka's 30 s
    assertThat(c.getGlobalConsumerConfigs("c")).doesNotContainKey(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG);
    StreamsConfig users = new StreamsConfig(DetectionTopology.streamsConfig(DetectionTopology.DEFAULT_APPLICATION_ID,
        "127.0.0.1:9092", Path.of("state"), Map.of(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, 45_000)));
    assertThat(users.getProducerConfigs("c")).containsEntry(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 45_000);
    assertThat(users.getMainConsumerConfigs("g", "c", 0)).containsEntry(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, 45_000);
  }
}
