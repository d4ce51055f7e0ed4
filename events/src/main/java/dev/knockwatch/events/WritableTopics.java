package dev.knockwatch.events;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.TopicExistsException;

/** Topics made so that the first write to them is kept. */
public final class WritableTopics {

  private static final Duration WITHIN = Duration.ofSeconds(60);

  private WritableTopics() {}

  /**
   * Creates {@code topics} (one that exists already is left as it is) and returns once every
   * partition of each can be written. The one way a topic is made, here and in the tests: a
   * producer that writes to a topic the moment it is created can be told NOT_LEADER_OR_FOLLOWER
   * by a broker that has not yet applied the new partition, while its next request, sent after,
   * is taken; every retry of the first is then refused with OUT_OF_ORDER_SEQUENCE_NUMBER until it
   * expires, and its records are lost although the producer is idempotent (KAFKA-15591, seen here
   * with Kafka 4.4 on a loaded machine).
   */
  public static void create(Admin admin, List<NewTopic> topics)
      throws InterruptedException, ExecutionException, TimeoutException {
    try {
      admin.createTopics(topics).all().get(60, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      if (!(e.getCause() instanceof TopicExistsException)) {
        throw e;
      }
    }
    awaitWritable(admin, topics.stream().map(NewTopic::name).toList());
  }

  /**
   * Waits until every partition of {@code names} answers a ListOffsets request, which its leader
   * answers from the partition's log as it takes a write: a leader named in the metadata is not
   * enough, the broker may not have applied it yet.
   */
  public static void awaitWritable(Admin admin, List<String> names)
      throws InterruptedException, ExecutionException, TimeoutException {
    Instant deadline = Instant.now().plus(WITHIN);
    Throwable last = null;
    while (true) {
      try {
        Map<String, TopicDescription> d = admin.describeTopics(names).allTopicNames().get(30, TimeUnit.SECONDS);
        Map<TopicPartition, OffsetSpec> ends = new HashMap<>();
        d.forEach((name, t) -> t.partitions().forEach(p -> ends.put(new TopicPartition(name, p.partition()),
            OffsetSpec.latest())));
        admin.listOffsets(ends).all().get(30, TimeUnit.SECONDS);
        return;
      } catch (ExecutionException e) {
        if (!(e.getCause() instanceof RetriableException)) {
          throw e;
        }
        last = e.getCause(); // created, and not yet applied by the broker that leads it
      }
      if (Instant.now().isAfter(deadline)) {
        throw new TimeoutException("the topics " + names + " cannot be written " + WITHIN.toSeconds()
            + " s after their creation: " + last);
      }
      Thread.sleep(50);
    }
  }
}
