package dev.knockwatch.broker;

import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.Topics.Topic;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.DescribeConsumerGroupsOptions;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.GroupIdNotFoundException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * What a stage needs of a cluster it does not own (topics that exist, operations its ACLs allow on
 * them and on its consumer groups), checked once at start: a stage without them stops in one line
 * that names each missing topic or each refused operation and resource, instead of starting and
 * failing batch after batch. Only {@code topics} creates topics, so no other stage needs Create.
 */
public record ClusterAccess(Map<Topic, Set<AclOperation>> topics, List<String> groups) {

  public static ClusterAccess none() {
    return new ClusterAccess(Map.of(), List.of());
  }

  /** This access, plus {@code ops} on {@code topic}. */
  public ClusterAccess topic(Topic topic, AclOperation... ops) {
    Set<AclOperation> both = EnumSet.noneOf(AclOperation.class);
    both.addAll(topics.getOrDefault(topic, Set.of()));
    both.addAll(List.of(ops));
    Map<Topic, Set<AclOperation>> t = new LinkedHashMap<>(topics);
    t.put(topic, Set.copyOf(both));
    return new ClusterAccess(t, groups);
  }

  /** This access, plus reading as consumer group {@code group}. */
  public ClusterAccess group(String group) {
    List<String> g = new ArrayList<>(groups);
    if (!g.contains(group)) {
      g.add(group);
    }
    return new ClusterAccess(topics, g);
  }

  /** This access and {@code other}'s together (one user running several stages). */
  public ClusterAccess plus(ClusterAccess other) {
    ClusterAccess both = this;
    for (Map.Entry<Topic, Set<AclOperation>> t : other.topics.entrySet()) {
      both = both.topic(t.getKey(), t.getValue().toArray(AclOperation[]::new));
    }
    for (String g : other.groups) {
      both = both.group(g);
    }
    return both;
  }

  /**
   * Asks the cluster, with the operations it authorises on each topic and group, and throws one
   * message (missing topics first, then refused operations) when anything is lacking.
   */
  public void require(String bootstrapServers, Map<String, Object> clientProps) {
    TopicCreator.withAdmin(bootstrapServers, clientProps, "check the topics", admin -> {
      List<String> names = topics.keySet().stream().map(Topic::name).toList();
      Map<String, KafkaFuture<TopicDescription>> described = admin.describeTopics(names,
          new DescribeTopicsOptions().includeAuthorizedOperations(true)).topicNameValues();
      List<String> missing = new ArrayList<>();
      List<String> refused = new ArrayList<>();
      for (Map.Entry<Topic, Set<AclOperation>> need : topics.entrySet()) {
        String name = need.getKey().name();
        try {
          lacking(described.get(name).get(30, TimeUnit.SECONDS).authorizedOperations(), need.getValue())
              .forEach(op -> refused.add(op + " on topic " + name));
        } catch (ExecutionException e) {
          if (e.getCause() instanceof UnknownTopicOrPartitionException) {
            missing.add(name);
          } else if (e.getCause() instanceof TopicAuthorizationException) {
            refused.add("Describe on topic " + name);
          } else {
            throw e;
          }
        }
      }
      if (!missing.isEmpty()) {
        throw new IllegalStateException("Kafka at " + bootstrapServers + " has no topic " + String.join(", ", missing)
            + ": create the topics with `knockwatch topics` first");
      }
      if (!groups.isEmpty()) {
        Map<String, KafkaFuture<ConsumerGroupDescription>> g = admin.describeConsumerGroups(groups,
            new DescribeConsumerGroupsOptions().includeAuthorizedOperations(true)).describedGroups();
        for (String group : groups) {
          try {
            lacking(g.get(group).get(30, TimeUnit.SECONDS).authorizedOperations(), Set.of(AclOperation.READ))
                .forEach(op -> refused.add(op + " on group " + group));
          } catch (ExecutionException e) {
            if (e.getCause() instanceof GroupAuthorizationException) {
              refused.add("Read on group " + group);
            } else if (!(e.getCause() instanceof GroupIdNotFoundException)) {
              throw e;
            }
          }
        }
      }
      if (!refused.isEmpty()) {
        throw new IllegalStateException("Kafka at " + bootstrapServers + " refuses " + user(clientProps) + " "
            + String.join(", ", refused) + " (its ACLs must allow them: docs/OPERATIONS.md lists each stage's)");
      }
      return null;
    });
  }

  private static final Pattern USERNAME = Pattern.compile("username\\s*=\\s*\"([^\"]*)\"");

  /** The SASL user of the settings, as "user NAME"; the user name is no secret (Kafka logs it too). */
  static String user(Map<String, Object> clientProps) {
    Matcher m = USERNAME.matcher(String.valueOf(clientProps.getOrDefault("sasl.jaas.config", "")));
    return m.find() ? "user " + Sanitize.text(m.group(1), 100) : "this client's user";
  }

  /** The operations of {@code needed} that {@code authorized} lacks, as kafka-acls.sh spells them; none when the cluster did not say. */
  private static List<String> lacking(Set<AclOperation> authorized, Set<AclOperation> needed) {
    if (authorized == null) {
      return List.of();
    }
    return needed.stream().filter(op -> !authorized.contains(op)).map(ClusterAccess::aclName).sorted().toList();
  }

  /** {@code IDEMPOTENT_WRITE} → {@code IdempotentWrite}. */
  static String aclName(AclOperation op) {
    StringBuilder b = new StringBuilder();
    for (String part : op.name().split("_")) {
      b.append(part.charAt(0)).append(part.substring(1).toLowerCase(Locale.ROOT));
    }
    return b.toString();
  }
}
