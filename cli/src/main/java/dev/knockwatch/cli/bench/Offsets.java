package dev.knockwatch.cli.bench;

import dev.knockwatch.events.Topics;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;

/** Where the benchmarks' topics end: how much a run has put on them. */
final class Offsets {

  private Offsets() {}

  /** Every partition of these topics, as declared in {@link Topics}. */
  static List<TopicPartition> partitions(Topics.Topic... topics) {
    List<TopicPartition> parts = new ArrayList<>();
    for (Topics.Topic t : topics) {
      for (int i = 0; i < t.partitions(); i++) {
        parts.add(new TopicPartition(t.name(), i));
      }
    }
    return parts;
  }

  /** The log end offset of every partition of these topics. */
  static Map<TopicPartition, Long> endOffsets(Admin admin, Topics.Topic... topics) throws Exception {
    Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
    partitions(topics).forEach(tp -> latest.put(tp, OffsetSpec.latest()));
    Map<TopicPartition, Long> ends = new HashMap<>();
    admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS).forEach((tp, info) -> ends.put(tp, info.offset()));
    return ends;
  }

  /** The records on these topics: the sum of their partitions' end offsets. */
  static long records(Admin admin, Topics.Topic... topics) throws Exception {
    return endOffsets(admin, topics).values().stream().mapToLong(Long::longValue).sum();
  }
}
