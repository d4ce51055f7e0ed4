package dev.knockwatch.notify;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Topics;
import dev.knockwatch.notify.config.ReceiversConfig;
import dev.knockwatch.notify.pipeline.Backoff;
import dev.knockwatch.notify.pipeline.NotificationLog;
import dev.knockwatch.notify.pipeline.NotifyMetrics;
import dev.knockwatch.notify.pipeline.Pending;
import dev.knockwatch.notify.silence.Silences;
import dev.knockwatch.notify.spi.Notifier;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.RecordDeserializationException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The notifier: reads committed alerts from {@code knockwatch.alerts} and runs each through the
 * stages route -> mute -> dedup -> throttle -> group -> budget -> (each receiver's queue)
 * retry -> send, in the shape of Alertmanager's notify pipeline: {@link NotifyPipeline} lists them
 * in order; this class keeps the consumer, the offsets and the records in flight.
 * <ul>
 *   <li><b>route</b> ({@link Routing}): the route tree of receivers.yaml, as Alertmanager's,
 *       names the receivers and the node whose timing each goes by;</li>
 *   <li><b>mute</b> ({@link Mute}): a shadow-mode rule's alert, one an active silence on
 *       {@code knockwatch.silences} matches, or one a firing alert inhibits (receivers.yaml's
 *       {@code inhibitRules}, {@link Inhibition}) goes to no receiver; a silenced or inhibited
 *       notification is recorded as such;</li>
 *   <li><b>dedup</b> ({@link Dedup}): the notification log says what each receiver was already
 *       sent for the alert; the same state is not sent twice, across restarts too;</li>
 *   <li><b>throttle</b> ({@link Throttle}): a count update within the route's
 *       {@code repeatInterval} of the last notification is recorded as throttled, not sent;
 *       firing and resolved always go;</li>
 *   <li><b>group</b>: routes with {@code groupBy} send one digest per group ({@link Grouper}),
 *       first after {@code groupWait}, then at most every {@code groupInterval};</li>
 *   <li><b>budget</b>: past its share of a receiver's minute ({@link FloodBudget}), a command's
 *       (or rule's) next notifications wait in one digest of that command (or rule) a minute, and
 *       past the receiver's {@code maxPerMinute} all of them wait in one digest a minute
 *       (not on the console: a terminal has no rate limit);</li>
 *   <li><b>retry, send</b>: each receiver has its own queue and thread ({@link ReceiverQueue}),
 *       most severe first, then oldest.</li>
 * </ul>
 * Any number of notifiers may share a group: the log is co-partitioned with the alerts, and each
 * reads its partitions' part of the log when it is given them, before their alerts.
 * Every outcome is a record on {@code knockwatch.notifications}, and every send's intent before it
 * (flushed): after a crash between the two, the same notification goes once more marked as a
 * possible repeat, with the same idempotency key (PagerDuty's dedup_key makes it harmless; a
 * webhook gets {@code Idempotency-Key} and {@code X-Knockwatch-Possible-Repeat}). An alert's
 * offset is committed once every receiver has delivered it, given up, or skipped it, and the log
 * is flushed first.
 */
public final class AlertDispatcher implements Runnable, AutoCloseable {

  public static final String DEFAULT_GROUP_ID = "knockwatch-notify";
  private static final Logger log = LoggerFactory.getLogger(AlertDispatcher.class);
  /** More records in flight than this and the consumer pauses until receivers catch up. */
  private static final int MAX_IN_FLIGHT = 20_000;
  static final long BUSY_POLL_MS = 100;
  static final long IDLE_POLL_MS = 5_000;

  private final String bootstrapServers;
  private final Map<String, Object> clientProps;
  private final KafkaConsumer<String, Alert> consumer;
  private final ReceiversConfig config;
  private final Collection<Notifier> notifiers;
  private final Backoff backoff;
  private final LongSupplier ticker;
  private final Map<TopicPartition, TreeMap<Long, Pending>> inFlight = new ConcurrentHashMap<>();
  private volatile NotificationLog notificationLog;
  private Silences silences;
  private volatile NotifyPipeline pipeline;
  private volatile boolean running = true;
  private volatile boolean idle;
  private volatile boolean flushNow;
  private final java.util.concurrent.atomic.AtomicLong committed = new java.util.concurrent.atomic.AtomicLong();
  private volatile Thread thread;

  /**
   * @param groupInstanceId the consumer's static member id ({@code group.instance.id}), so that a
   *     restart after a crash takes the dead member's place at once; null for a dynamic member
   */
  public AlertDispatcher(String bootstrapServers, String groupId, String groupInstanceId, Map<String, Object> clientProps,
      ReceiversConfig config, Collection<Notifier> notifiers, Backoff backoff) {
    this(bootstrapServers, groupId, groupInstanceId, clientProps, config, notifiers, backoff, System::nanoTime);
  }

  /** {@code ticker}: the monotonic clock groups and flood budgets go by, in nanoseconds (a test's own). */
  AlertDispatcher(String bootstrapServers, String groupId, String groupInstanceId, Map<String, Object> clientProps,
      ReceiversConfig config, Collection<Notifier> notifiers, Backoff backoff, LongSupplier ticker) {
    this.bootstrapServers = bootstrapServers;
    this.clientProps = Map.copyOf(clientProps);
    Map<String, Object> p = new HashMap<>(clientProps);
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    p.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
    if (groupInstanceId != null) {
      p.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, groupInstanceId);
    }
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    // idle, a fetch waits at the broker 5 s (not 500 ms) before it is sent again; an alert ends the wait at
    // once. Heartbeats every 5 s, not 3 (Topics.HEARTBEAT_INTERVAL_MS).
    p.put(ConsumerConfig.FETCH_MAX_WAIT_MS_CONFIG, dev.knockwatch.events.Topics.IDLE_FETCH_WAIT_MS);
    dev.knockwatch.events.Topics.heartbeatIntervalMs(clientProps)
        .ifPresent(ms -> p.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, ms));
    p.putIfAbsent(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, dev.knockwatch.events.Topics.REQUEST_TIMEOUT_MS);
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    this.consumer = new KafkaConsumer<>(p, new StringDeserializer(), Json.serde(Alert.class).deserializer());
    this.config = config;
    this.notifiers = List.copyOf(notifiers);
    this.backoff = backoff;
    this.ticker = ticker;
  }

  @Override
  public void run() {
    thread = Thread.currentThread();
    try {
      notificationLog = NotificationLog.open(bootstrapServers, clientProps);
      silences = new Silences(bootstrapServers, clientProps);
      pipeline = new NotifyPipeline(config, notifiers, backoff, notificationLog, silences, ticker);
      consumer.subscribe(List.of(Topics.ALERTS.name()), new ConsumerRebalanceListener() {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
          commitDone();
          partitions.forEach(inFlight::remove);
          pipeline.forget(partitions.stream().map(TopicPartition::partition).toList());
        }

        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
          // what this partition's alerts were sent, by whichever notifier had them: before any is handled
          notificationLog.load(partitions.stream().map(TopicPartition::partition).toList());
        }
      });
      while (running) {
        ConsumerRecords<String, Alert> records;
        try {
          // busy (groups waiting, deliveries in flight), a turn every 100 ms for what falls due; idle, an
          // alert still ends the wait at once, and a turn in five seconds costs a fiftieth of the CPU
          records = consumer.poll(Duration.ofMillis(idle ? IDLE_POLL_MS : BUSY_POLL_MS));
        } catch (RecordDeserializationException e) {
          // One value that is not an alert must not stop every later page: skip it, loudly.
          NotifyMetrics.SKIPPED.inc();
          log.error("skipping a value on {} partition {} offset {} that is not an Alert: {}",
              e.topicPartition().topic(), e.topicPartition().partition(), e.offset(), e.getMessage());
          consumer.seek(e.topicPartition(), e.offset() + 1);
          committed.incrementAndGet(); // handled: there is nothing to deliver
          continue;
        }
        silences.refresh();
        for (ConsumerRecord<String, Alert> r : records) {
          TopicPartition tp = new TopicPartition(r.topic(), r.partition());
          Pending pending = new Pending(r.offset());
          inFlight.computeIfAbsent(tp, k -> new TreeMap<>()).put(r.offset(), pending);
          if (r.value() != null) {
            pipeline.handle(r.value(), pending);
          }
          pending.done();
        }
        pipeline.sendDue(flushNow);
        commitDone();
        applyBackpressure();
        idle = records.isEmpty() && pipeline.groupsEmpty() && inFlight.values().stream().allMatch(TreeMap::isEmpty);
      }
    } catch (WakeupException e) {
      if (running) {
        throw e;
      }
    } finally {
      if (pipeline != null) {
        pipeline.close();
      }
      commitDone();
      consumer.close(LEAVE);
      if (notificationLog != null) {
        notificationLog.close();
      }
      if (silences != null) {
        silences.close();
      }
    }
  }

  /** Commits, per partition, up to the first record not done yet; the log goes to Kafka first. */
  private void commitDone() {
    Map<TopicPartition, OffsetAndMetadata> commit = new HashMap<>();
    for (Map.Entry<TopicPartition, TreeMap<Long, Pending>> e : inFlight.entrySet()) {
      TreeMap<Long, Pending> pending = e.getValue();
      Long next = null;
      while (!pending.isEmpty() && pending.firstEntry().getValue().isDone()) {
        next = pending.pollFirstEntry().getKey() + 1;
        committed.incrementAndGet();
      }
      if (next != null) {
        commit.put(e.getKey(), new OffsetAndMetadata(next));
      }
    }
    if (!commit.isEmpty()) {
      notificationLog.flush();
      consumer.commitSync(commit);
    }
  }

  private void applyBackpressure() {
    int inFlightCount = inFlight.values().stream().mapToInt(TreeMap::size).sum();
    if (inFlightCount > MAX_IN_FLIGHT) {
      consumer.pause(consumer.assignment());
    } else if (!consumer.paused().isEmpty()) {
      consumer.resume(consumer.paused());
    }
  }

  /** From now on groups leave without waiting out their groupWait: for replay's end. */
  public void flushGroups() {
    flushNow = true;
  }

  /**
   * How many records of the alerts topic are handled: delivered, given up or skipped by every
   * receiver and committed, or skipped as unreadable.
   */
  public long committedRecords() {
    return committed.get();
  }

  /**
   * True when the last poll found nothing, no group waits and every alert read so far is done:
   * replay --deliver stops then.
   */
  public boolean idle() {
    return idle;
  }

  /**
   * A stopped notifier leaves its group at once, static member or not: its partitions go to the
   * others now rather than after its session, and {@code topics --grow-to} finds the group empty.
   */
  private static final CloseOptions LEAVE = CloseOptions.timeout(Duration.ofSeconds(5))
      .withGroupMembershipOperation(CloseOptions.GroupMembershipOperation.LEAVE_GROUP);

  @Override
  public void close() {
    running = false;
    Thread t = thread;
    if (t == null) {
      consumer.close(LEAVE);
      return;
    }
    consumer.wakeup();
    if (t != Thread.currentThread()) {
      try {
        t.join(15_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
