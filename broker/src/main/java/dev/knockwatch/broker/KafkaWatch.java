package dev.knockwatch.broker;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Says what is wrong while it is wrong: every {@link #EVERY} a process asks the cluster to
 * describe itself (an Admin call, {@link #EVERY} to answer). When it does not answer, the process
 * logs it at once — since when, and what is waiting — then once a minute while it lasts, and once
 * when Kafka answers again, with how long it was gone. {@code onChange} hears each change (ingest
 * turns it into {@code knockwatch_ingest_kafka_up}).
 */
public final class KafkaWatch implements AutoCloseable {

  public static final Duration EVERY = Duration.ofSeconds(5);
  static final Duration REPEAT = Duration.ofMinutes(1);
  private static final Logger log = LoggerFactory.getLogger(KafkaWatch.class);

  private final String who;
  private final String bootstrapServers;
  private final Supplier<String> waiting;
  private final Consumer<Boolean> onChange;
  private final Admin admin;
  private final Thread thread;
  private volatile boolean running = true;

  /**
   * @param who the process, as its log says it ({@code ingest}, {@code streams}, {@code notify})
   * @param waiting what is waiting for Kafka now, in words, e.g. "1,204 KB of logs unread"
   */
  public KafkaWatch(String who, String bootstrapServers, Map<String, Object> clientProps, Supplier<String> waiting,
      Consumer<Boolean> onChange) {
    this.who = who;
    this.bootstrapServers = bootstrapServers;
    this.waiting = waiting;
    this.onChange = onChange;
    Map<String, Object> p = new HashMap<>(clientProps);
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, (int) EVERY.toMillis());
    p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) EVERY.toMillis());
    p.put(AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 1000);
    this.admin = Admin.create(p);
    this.thread = new Thread(this::run, "knockwatch-kafka-watch");
    this.thread.setDaemon(true);
    this.thread.start();
  }

  private boolean answers() {
    try {
      return !admin.describeCluster(new DescribeClusterOptions().timeoutMs((int) EVERY.toMillis())).nodes()
          .get(EVERY.toMillis() + 1000, TimeUnit.MILLISECONDS).isEmpty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return true;
    } catch (Exception e) {
      return false;
    }
  }

  private void run() {
    Instant downSince = null;
    Instant lastSaid = null;
    while (running) {
      long start = System.nanoTime();
      boolean up = answers();
      if (!running) {
        return;
      }
      Instant now = Instant.now();
      if (!up && downSince == null) {
        downSince = now.minus(EVERY);
        lastSaid = now;
        onChange.accept(false);
        log.warn("{}: Kafka at {} does not answer (since about {}); waiting: {}", who, bootstrapServers, downSince,
            waiting.get());
      } else if (!up && Duration.between(lastSaid, now).compareTo(REPEAT) >= 0) {
        lastSaid = now;
        log.warn("{}: Kafka at {} still does not answer, for {} s now (since about {}); waiting: {}", who,
            bootstrapServers, Duration.between(downSince, now).toSeconds(), downSince, waiting.get());
      } else if (up && downSince != null) {
        log.info("{}: Kafka at {} answers again, after about {} s; waiting: {}", who, bootstrapServers,
            Duration.between(downSince, now).toSeconds(), waiting.get());
        downSince = null;
        onChange.accept(true);
      }
      long left = EVERY.toMillis() - (System.nanoTime() - start) / 1_000_000;
      if (left > 0) {
        try {
          Thread.sleep(left);
        } catch (InterruptedException e) {
          return;
        }
      }
    }
  }

  @Override
  public void close() {
    running = false;
    thread.interrupt();
    admin.close(Duration.ofSeconds(2));
  }
}
