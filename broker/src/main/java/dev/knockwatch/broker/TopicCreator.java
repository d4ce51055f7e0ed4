package dev.knockwatch.broker;

import dev.knockwatch.events.Topics;
import dev.knockwatch.events.Topics.Topic;
import dev.knockwatch.events.WritableTopics;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Creates the {@link Topics} registry's topics on any cluster, embedded or not. */
public final class TopicCreator {

  private static final Logger log = LoggerFactory.getLogger(TopicCreator.class);

  /** A cluster that closed this many connections without an answer, for this long, is not one that is starting. */
  private static final int HUNG_UP = 3;
  private static final Duration MISMATCH_AFTER = Duration.ofSeconds(10);

  private TopicCreator() {}

  /**
   * Creates each registry topic that does not exist yet, with its partitions and configs and the
   * cluster's default replication factor. {@code clientProps} carries SASL/TLS settings for an
   * external cluster.
   */
  public static List<String> createMissing(String bootstrapServers, Map<String, Object> clientProps) {
    return createMissing(bootstrapServers, clientProps, Layout.DEFAULT);
  }

  /**
   * How missing topics are laid out: the partitions of the keyed topics (violations, alerts and
   * the notification log, which must keep one count: the log is co-partitioned with the alerts),
   * null for each topic's own; the replication factor, null for the cluster's default.
   */
  public record Layout(Integer partitions, Short replicationFactor) {
    public static final Layout DEFAULT = new Layout(null, null);
  }

  /** As {@link #createMissing(String, Map)}, laid out as {@code layout} says; a replication factor above the brokers' count is refused. */
  public static List<String> createMissing(String bootstrapServers, Map<String, Object> clientProps, Layout layout) {
    return withAdmin(bootstrapServers, clientProps, "create topics", admin -> {
      if (layout.replicationFactor() != null) {
        int brokers = admin.describeCluster().nodes().get(30, TimeUnit.SECONDS).size();
        if (layout.replicationFactor() > brokers) {
          throw new IllegalArgumentException("a replication factor of " + layout.replicationFactor()
              + " needs as many brokers; the cluster at " + bootstrapServers + " has " + brokers);
        }
      }
      Set<String> existing = admin.listTopics().names().get(30, TimeUnit.SECONDS);
      List<NewTopic> missing = Topics.ALL.stream()
          .filter(t -> !existing.contains(t.name()))
          .map(t -> newTopic(t, layout))
          .toList();
      if (missing.isEmpty()) {
        return List.of();
      }
      WritableTopics.create(admin, missing);
      List<String> names = missing.stream().map(NewTopic::name).toList();
      log.info("created topics {}", names);
      return names;
    });
  }

  /** Waits until the cluster at {@code bootstrapServers} answers a metadata request (plaintext, no settings). */
  public static void awaitReady(String bootstrapServers, Duration timeout) {
    awaitReady(bootstrapServers, Map.of(), timeout);
  }

  /**
   * Waits until the cluster answers a metadata request made with {@code clientProps}. A cluster
   * that answers with a refusal (authentication failed, TLS handshake failed, not authorised)
   * will not change its mind by waiting: that ends the wait at once, with the cause.
   */
  public static void awaitReady(String bootstrapServers, Map<String, Object> clientProps, Duration timeout) {
    Instant started = Instant.now();
    Instant deadline = started.plus(timeout);
    Exception last = null;
    Admin admin;
    try {
      admin = Admin.create(adminProps(bootstrapServers, clientProps));
    } catch (org.apache.kafka.common.KafkaException e) {
      // the client could not be made from these settings (a bad value, a keystore it cannot read)
      throw new IllegalStateException("the Kafka client settings for " + bootstrapServers + " are not usable: "
          + KafkaRefusal.settingsProblem(e, clientProps));
    }
    try {
      while (Instant.now().isBefore(deadline)) {
        try {
          if (!admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).isEmpty()) {
            return;
          }
        } catch (ExecutionException e) {
          String refused = KafkaRefusal.describe(e.getCause());
          if (refused != null) {
            throw new IllegalStateException("Kafka at " + bootstrapServers + " " + refused);
          }
          last = e;
        } catch (TimeoutException e) {
          last = e;
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted while waiting for Kafka", e);
        }
        // A broker still starting holds the connections it took; one that hangs up on every
        // request wants another security.protocol (TLS, SASL): waiting will not change that.
        double closed = Math.min(connectionMetric(admin, "connection-creation-total"),
            connectionMetric(admin, "connection-close-total"));
        if (closed >= HUNG_UP && Duration.between(started, Instant.now()).compareTo(MISMATCH_AFTER) >= 0) {
          Object protocol = clientProps.getOrDefault("security.protocol", "PLAINTEXT");
          throw new IllegalStateException("Kafka at " + bootstrapServers + " took " + (long) closed + " connections and "
              + "closed each without an answer: it expects another security.protocol than " + protocol
              + " (TLS or SASL settings go in --kafka-config)");
        }
      }
      boolean nothingListens = connectionMetric(admin, "connection-creation-total") == 0;
      throw new IllegalStateException("Kafka at " + bootstrapServers + " did not answer within " + timeout.toSeconds()
          + " s" + (nothingListens ? ": nothing accepted a connection there"
              : last == null || last.getMessage() == null ? "" : ": " + last.getMessage()));
    } finally {
      // not the default close, which waits for the pending call's own timeout (30 s)
      admin.close(Duration.ofSeconds(1));
    }
  }

  /**
   * The admin client's own count of connections made (a refused connect is none) or closed (by
   * either side): both past a few with no answer is a listener that hangs up.
   */
  private static double connectionMetric(Admin admin, String name) {
    for (var m : admin.metrics().entrySet()) {
      if (m.getKey().name().equals(name) && m.getKey().group().equals("admin-client-metrics")
          && m.getValue().metricValue() instanceof Double d) {
        return d;
      }
    }
    return 0;
  }

  private static NewTopic newTopic(Topic t, Layout layout) {
    int partitions = layout.partitions() != null && t.partitions() > 1 ? layout.partitions() : t.partitions();
    return new NewTopic(t.name(), Optional.of(partitions), Optional.ofNullable(layout.replicationFactor()))
        .configs(t.configs());
  }

  /** A topic as the cluster has it. */
  public record Shape(int partitions, int replicationFactor) {}

  /** Each registry topic the cluster has, in the registry's order. */
  public static Map<String, Shape> describe(String bootstrapServers, Map<String, Object> clientProps) {
    return withAdmin(bootstrapServers, clientProps, "describe topics", admin -> {
      Set<String> existing = admin.listTopics().names().get(30, TimeUnit.SECONDS);
      List<String> names = Topics.ALL.stream().map(Topic::name).filter(existing::contains).toList();
      Map<String, TopicDescription> d = admin.describeTopics(names).allTopicNames().get(30, TimeUnit.SECONDS);
      Map<String, Shape> out = new LinkedHashMap<>();
      for (String n : names) {
        out.put(n, new Shape(d.get(n).partitions().size(), d.get(n).partitions().get(0).replicas().size()));
      }
      return out;
    });
  }

  /** A call of the admin API: its futures' failures are {@link #withAdmin}'s to report. */
  interface AdminCall<T> {
    T call(Admin admin) throws InterruptedException, ExecutionException, TimeoutException;
  }

  /** Runs {@code call} on an admin client of its own; a failure says what could not be done, and where. */
  static <T> T withAdmin(String bootstrapServers, Map<String, Object> clientProps, String what,
      AdminCall<T> call) {
    try (Admin admin = Admin.create(adminProps(bootstrapServers, clientProps))) {
      return call.call(admin);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while trying to " + what, e);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("cannot " + what + " on " + bootstrapServers + ": " + e.getMessage(), e);
    }
  }

  private static Map<String, Object> adminProps(String bootstrapServers, Map<String, Object> clientProps) {
    Map<String, Object> p = new HashMap<>(clientProps);
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000);
    return p;
  }
}
