package dev.knockwatch.notify;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Topics;
import dev.knockwatch.notify.config.ReceiversConfig;
import dev.knockwatch.notify.config.Route;
import dev.knockwatch.notify.pipeline.Backoff;
import dev.knockwatch.notify.pipeline.Dedup;
import dev.knockwatch.notify.pipeline.Inhibition;
import dev.knockwatch.notify.pipeline.Mute;
import dev.knockwatch.notify.pipeline.Routing;
import dev.knockwatch.notify.pipeline.Throttle;
import dev.knockwatch.notify.pipeline.FloodBudget;
import dev.knockwatch.notify.pipeline.Grouper;
import dev.knockwatch.notify.pipeline.NotificationLog;
import dev.knockwatch.notify.pipeline.Pending;
import dev.knockwatch.notify.pipeline.ReceiverQueue;
import dev.knockwatch.notify.silence.Silences;
import java.util.Optional;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
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
 * retry -> send, in the shape of Alertmanager's notify pipeline ({@link #handle}).
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

  private final String bootstrapServers;
  private final Map<String, Object> clientProps;
  private final KafkaConsumer<String, Alert> consumer;
  private final ReceiversConfig config;
  private final Map<String, Notifier> notifiers;
  private final Backoff backoff;
  private final Map<String, ReceiverQueue> queues = new LinkedHashMap<>();
  private final Grouper grouper = new Grouper();
  private final FloodBudget budget;
  /** The console receivers: a terminal has no rate limit to protect, and every page is a line of its own. */
  private final java.util.Set<String> unbudgeted;
  private final Map<TopicPartition, TreeMap<Long, Pending>> inFlight = new ConcurrentHashMap<>();
  /**
   * What was decided for each receiver and key and is maybe not sent yet: the next state of the
   * same alert, read before the send finished, must see it (or it would fire twice).
   */
  private final Map<String, NotificationLog.Entry> decided = new ConcurrentHashMap<>();
  private volatile NotificationLog notificationLog;
  private Silences silences;
  private final Routing routing;
  private final Inhibition inhibition;
  private Mute mute;
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
    this.bootstrapServers = bootstrapServers;
    this.clientProps = Map.copyOf(clientProps);
    Map<String, Object> p = new HashMap<>(clientProps);
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    p.put(ConsumerConfig.GROUP_ID_CONFIG, groupId);
    if (groupInstanceId != null) {
      p.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, groupInstanceId);
    }
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    this.consumer = new KafkaConsumer<>(p, new StringDeserializer(), Json.serde(Alert.class).deserializer());
    this.config = config;
    this.routing = new Routing(config.route());
    this.budget = new FloodBudget(config::maxPerMinute);
    this.inhibition = new Inhibition(config.inhibitRules());
    this.unbudgeted = config.receivers().stream().filter(r -> r instanceof dev.knockwatch.notify.config.Receiver.Console)
        .map(dev.knockwatch.notify.config.Receiver::name).collect(java.util.stream.Collectors.toSet());
    Map<String, Notifier> byName = new LinkedHashMap<>();
    notifiers.forEach(n -> byName.put(n.name(), n));
    this.notifiers = byName;
    this.backoff = backoff;
  }

  @Override
  public void run() {
    thread = Thread.currentThread();
    try {
      notificationLog = NotificationLog.open(bootstrapServers, clientProps);
      silences = new Silences(bootstrapServers, clientProps);
      mute = new Mute(silences::muting, inhibition);
      for (Notifier n : notifiers.values()) {
        queues.put(n.name(), new ReceiverQueue(n, minInterval(n.name()), backoff));
      }
      consumer.subscribe(List.of(Topics.ALERTS.name()), new ConsumerRebalanceListener() {
        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
          commitDone();
          partitions.forEach(inFlight::remove);
          List<Integer> gone = partitions.stream().map(TopicPartition::partition).toList();
          notificationLog.forget(gone);
          decided.keySet().removeIf(k -> gone.contains(notificationLog.partitionOf(fingerprintOf(k))));
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
          records = consumer.poll(Duration.ofMillis(100));
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
            handle(r.value(), pending);
          }
          pending.done();
        }
        for (Grouper.Due due : grouper.due(System.nanoTime(), flushNow)) {
          submit(due.notification(), due.pendings());
        }
        commitDone();
        applyBackpressure();
        idle = records.isEmpty() && grouper.isEmpty() && inFlight.values().stream().allMatch(TreeMap::isEmpty);
      }
    } catch (WakeupException e) {
      if (running) {
        throw e;
      }
    } finally {
      queues.values().forEach(ReceiverQueue::close);
      commitDone();
      consumer.close(Duration.ofSeconds(5));
      if (notificationLog != null) {
        notificationLog.close();
      }
      if (silences != null) {
        silences.close();
      }
    }
  }

  /**
   * One alert through the stages, as the class comment names them: route, then mute (once for
   * the alert), then for each receiver dedup, throttle, and group, fold or send.
   */
  private void handle(Alert alert, Pending pending) {
    Instant now = Instant.now();
    inhibition.observe(alert);
    List<Routing.Target> targets = routing.targets(alert);
    Optional<Mute.Muted> muted = targets.isEmpty() ? Optional.empty() : mute.check(alert, now);
    for (Routing.Target target : targets) {
      String receiver = target.receiver();
      if (muted.isPresent()) {
        muted(receiver, alert, muted.get());
        continue;
      }
      NotificationLog.Entry last = decided.getOrDefault(slot(receiver, alert.fingerprint()),
          notificationLog.lastSent(receiver, alert.fingerprint()));
      Notification.Event event = Notification.eventOf(alert, last != null);
      if (Dedup.alreadySent(alert, last)) {
        NotifyMetrics.NOTIFICATIONS.labels(receiver, "duplicate").inc();
        continue;
      }
      if (Throttle.holds(event, last, target.route().repeatInterval(), now)) {
        NotifyMetrics.NOTIFICATIONS.labels(receiver, "throttled").inc();
        notificationLog.record(entry(receiver, alert.fingerprint(), "throttled", event, alert, null, null));
        continue;
      }
      pending.add();
      decided.put(slot(receiver, alert.fingerprint()),
          entry(receiver, alert.fingerprint(), NotificationLog.SENT, event, alert, null, "decided"));
      dispatch(target, event, alert, pending);
    }
  }

  private void muted(String receiver, Alert alert, Mute.Muted why) {
    NotifyMetrics.NOTIFICATIONS.labels(receiver, why.outcome()).inc();
    if (why.detail() != null) {
      notificationLog.record(entry(receiver, alert.fingerprint(), why.outcome(), Notification.eventOf(alert, false), alert,
          null, why.detail()));
    }
  }

  /**
   * Send again (a notification intended and never recorded), group (a route with groupBy), fold
   * (past the receiver's flood budget), or send now.
   */
  private void dispatch(Routing.Target target, Notification.Event event, Alert alert, Pending pending) {
    String receiver = target.receiver();
    Route route = target.route();
    long now = System.nanoTime();
    Notification n = Notification.of(receiver, event, alert, null);
    String fold;
    if (intended(n)) {
      // the last process stopped between sending this very notification and recording it: the
      // same notification again, alone and with its idempotency key, marked; never in a digest
      submit(n.asPossibleRepeat(), List.of(pending));
    } else if (!route.groupBy().isEmpty() && event != Notification.Event.UPDATED) {
      grouper.add(receiver, route, event, alert, pending, now);
    } else if (!unbudgeted.contains(receiver) && (fold = budget.fold(receiver, alert, now)) != null) {
      // past its command's (or rule's, or the receiver's) share of the minute: in that digest
      NotifyMetrics.NOTIFICATIONS.labels(receiver, "folded").inc();
      grouper.add(receiver, Route.overflow(receiver, fold, route.repeatInterval()), event, alert, pending, now);
    } else {
      submit(n, List.of(pending));
    }
  }

  /** Whether this receiver's notification of this alert, in this state, was intended and never recorded. */
  private boolean intended(Notification n) {
    Alert a = n.alerts().get(0);
    NotificationLog.Entry intent = notificationLog.openIntent(n.receiver(), a.fingerprint());
    return intent != null && intent.event().equals(n.event().name().toLowerCase(Locale.ROOT))
        && intent.status().equals(a.status().name().toLowerCase(Locale.ROOT)) && intent.count() == a.count();
  }

  /** The key of what was decided for a receiver and an alert's fingerprint ({@link #decided}). */
  private static String slot(String receiver, String fingerprint) {
    return receiver + "\u0000" + fingerprint;
  }

  /** The fingerprint a {@link #slot} was made of. */
  private static String fingerprintOf(String slot) {
    return slot.substring(slot.indexOf('\u0000') + 1);
  }

  private void submit(Notification n, List<Pending> pendings) {
    ReceiverQueue queue = queues.get(n.receiver());
    if (n.isDigest()) {
      NotifyMetrics.NOTIFICATIONS.labels(n.receiver(), "grouped").inc(n.alerts().size() - 1);
    }
    NotificationLog log = notificationLog;
    queue.submit(new ReceiverQueue.Task(n, () -> n.isDigest() ? null : refOf(log.lastSent(n.receiver(), n.key())), x -> log.intend(x.alerts().stream().map(a ->
        entry(x.receiver(), a.fingerprint(), NotificationLog.INTENT, x.event(), a, null, x.idempotencyKey())).toList()),
        result -> {
      String outcome = result.delivered() ? NotificationLog.SENT : "gave-up";
      NotifyMetrics.NOTIFICATIONS.labels(n.receiver(), outcome).inc();
      for (Alert a : n.alerts()) {
        // a digest's members count as sent (their updates are throttled against it), with no ref of their own
        NotificationLog.Entry done = entry(n.receiver(), a.fingerprint(), outcome, n.event(), a,
            n.isDigest() ? null : result.ref(), result.delivered() ? (n.isDigest() ? "in " + n.key() : null)
                : result.detail());
        notificationLog.record(done);
        if (result.delivered()) {
          // the log knows it now; a later decision for the same alert stays
          decided.computeIfPresent(slot(n.receiver(), a.fingerprint()),
              (k, v) -> v.status().equals(done.status()) && v.count() == done.count() ? null : v);
        }
      }
      pendings.forEach(Pending::done);
    }));
  }

  private static String refOf(NotificationLog.Entry e) {
    return e == null ? null : e.ref();
  }

  private static NotificationLog.Entry entry(String receiver, String key, String outcome, Notification.Event event,
      Alert a, String ref, String detail) {
    return new NotificationLog.Entry(receiver, key, outcome, event.name().toLowerCase(Locale.ROOT),
        a.status().name().toLowerCase(Locale.ROOT), a.count(), Instant.now(), ref, detail);
  }

  private Duration minInterval(String receiver) {
    return config.receivers().stream().filter(r -> r.name().equals(receiver))
        .map(r -> r instanceof dev.knockwatch.notify.config.Receiver.Slack s ? s.minInterval() : Duration.ZERO)
        .findFirst().orElse(Duration.ZERO);
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

  @Override
  public void close() {
    running = false;
    Thread t = thread;
    if (t == null) {
      consumer.close(Duration.ofSeconds(5));
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
