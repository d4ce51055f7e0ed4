package dev.knockwatch.broker;

import static org.apache.kafka.common.acl.AclOperation.DESCRIBE;
import static org.apache.kafka.common.acl.AclOperation.IDEMPOTENT_WRITE;
import static org.apache.kafka.common.acl.AclOperation.READ;
import static org.apache.kafka.common.acl.AclOperation.WRITE;
import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.Topics;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** A stage's needs combine without loss or repeats; operations and users are named as an operator writes them. */
class ClusterAccessTest {

  @Test
  void needsCombinePerTopicAndGroupsOnce() {
    ClusterAccess ingest = ClusterAccess.none().topic(Topics.VIOLATIONS, WRITE).topic(Topics.REJECTED, WRITE);
    ClusterAccess streams = ClusterAccess.none().topic(Topics.VIOLATIONS, READ).topic(Topics.VIOLATIONS, DESCRIBE)
        .group("knockwatch-streams");
    ClusterAccess both = ingest.plus(streams).plus(streams);
    assertThat(both.topics()).isEqualTo(Map.of(Topics.VIOLATIONS, Set.of(WRITE, READ, DESCRIBE),
        Topics.REJECTED, Set.of(WRITE)));
    assertThat(both.groups()).isEqualTo(List.of("knockwatch-streams"));
    assertThat(ingest.topics()).as("unchanged").containsEntry(Topics.VIOLATIONS, Set.of(WRITE));
  }

  @Test
  void operationsAndUsersAreNamedAsAnOperatorWritesThem() {
    assertThat(ClusterAccess.aclName(IDEMPOTENT_WRITE)).isEqualTo("IdempotentWrite");
    assertThat(ClusterAccess.aclName(WRITE)).isEqualTo("Write");
    assertThat(ClusterAccess.user(Map.of("sasl.jaas.config",
        "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"knockwatch-ingest\" password=\"s3cret\";")))
        .isEqualTo("user knockwatch-ingest").doesNotContain("s3cret");
    assertThat(ClusterAccess.user(Map.of())).isEqualTo("this client's user");
    assertThat(ClusterAccess.user(Map.of("sasl.jaas.config", "x username=\"a\u202Eb\nc\" password=\"p\";")))
        .as("a user name is shown safely").doesNotContain("\u202E", "\n");
  }
}
