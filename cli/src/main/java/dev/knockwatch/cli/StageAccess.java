package dev.knockwatch.cli;

import static org.apache.kafka.common.acl.AclOperation.READ;
import static org.apache.kafka.common.acl.AclOperation.WRITE;

import dev.knockwatch.broker.ClusterAccess;
import dev.knockwatch.events.Topics;
import dev.knockwatch.streams.DetectionTopology;
import dev.knockwatch.streams.TimelineTopology;

/**
 * What each stage needs of an external cluster, checked at its start (docs/OPERATIONS.md gives the
 * same as kafka-acls.sh commands, and SecuredKafkaTest applies exactly those). Streams also needs
 * its transactional ids and internal topics, which Kafka Streams itself reports when refused.
 */
final class StageAccess {

  static final ClusterAccess INGEST = ClusterAccess.none()
      .topic(Topics.VIOLATIONS, WRITE)
      .topic(Topics.REJECTED, WRITE);

  /** {@code ingest --raw-topic}: read the raw lines in a group, write what the agent writes. */
  static ClusterAccess rawIngest(String rawTopic, String group) {
    return INGEST.plus(ClusterAccess.none()
        .topic(new Topics.Topic(rawTopic, Topics.RAW.partitions(), Topics.RAW.configs(), Topics.RAW.key(),
            Topics.RAW.value()), READ)
        .group(group));
  }

  static final ClusterAccess STREAMS = ClusterAccess.none()
      .topic(Topics.VIOLATIONS, READ)
      .topic(Topics.BY_GRAIN, READ, WRITE)
      .topic(Topics.ALERTS, READ, WRITE)
      .topic(Topics.POLICY, READ, WRITE)
      .topic(Topics.SILENCES, READ, WRITE)
      .group(DetectionTopology.DEFAULT_APPLICATION_ID)
      .group(TimelineTopology.DEFAULT_APPLICATION_ID);

  static ClusterAccess notify(String group) {
    return ClusterAccess.none()
        .topic(Topics.ALERTS, READ)
        .topic(Topics.NOTIFICATIONS, READ, WRITE)
        .topic(Topics.SILENCES, READ)
        .group(group);
  }

  /** {@code up} on an external cluster: every stage in one process, under one user. */
  static ClusterAccess all(String notifyGroup) {
    return INGEST.plus(STREAMS).plus(notify(notifyGroup));
  }

  private StageAccess() {}
}
