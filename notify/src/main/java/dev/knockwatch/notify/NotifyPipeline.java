package dev.knockwatch.notify;

import dev.knockwatch.events.Alert;
import dev.knockwatch.notify.config.ReceiversConfig;
import dev.knockwatch.notify.config.Route;
import dev.knockwatch.notify.pipeline.Backoff;
import dev.knockwatch.notify.pipeline.Dedup;
import dev.knockwatch.notify.pipeline.FloodBudget;
import dev.knockwatch.notify.pipeline.Grouper;
import dev.knockwatch.notify.pipeline.Inhibition;
import dev.knockwatch.notify.pipeline.Mute;
import dev.knockwatch.notify.pipeline.NotificationLog;
import dev.knockwatch.notify.pipeline.NotifyMetrics;
import dev.knockwatch.notify.pipeline.Pending;
import dev.knockwatch.notify.pipeline.ReceiverQueue;
import dev.knockwatch.notify.pipeline.Routing;
import dev.knockwatch.notify.pipeline.Stage;
import dev.knockwatch.notify.pipeline.Stage.Delivery;
import dev.knockwatch.notify.pipeline.Throttle;
import dev.knockwatch.notify.silence.Silences;
import dev.knockwatch.notify.spi.Notification;
import dev.knockwatch.notify.spi.Notifier;
import dev.knockwatch.notify.spi.Receiver;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import java.util.stream.Collectors;

/**
 * The stages an alert goes through on its way to each receiver, listed in order as Alertmanager's
 * {@code MultiStage} ({@link #stages}): route (once for the alert), then for each receiver mute,
 * dedup, throttle, decide, and repeat / group / fold / send into the receiver's queue
 * ({@link AlertDispatcher} says what each does). It owns what the stages share: the notification
 * log, what was decided and not yet sent, the groups waiting, the flood budget and the queues.
 */
final class NotifyPipeline implements AutoCloseable {

  private final NotificationLog notificationLog;
  private final Routing routing;
  private final Inhibition inhibition;
  private final Mute mute;
  private final Grouper grouper = new Grouper();
  private final FloodBudget budget;
  /** The receivers whose type is not budgeted (the console): a terminal has no rate limit to protect. */
  private final Set<String> unbudgeted;
  private final Map<String, ReceiverQueue> queues = new LinkedHashMap<>();
  /** The monotonic clock groups and the flood budget go by (System::nanoTime; a test's own ticker). */
  private final LongSupplier ticker;
  /**
   * What was decided for each receiver and key and is maybe not sent yet: the next state of the
   * same alert, read before the send finished, must see it (or it would fire twice).
   */
  private final Map<String, NotificationLog.Entry> decided = new ConcurrentHashMap<>();
  private final Stage stages;

  NotifyPipeline(ReceiversConfig config, Collection<Notifier> notifiers, Backoff backoff, NotificationLog notificationLog,
      Silences silences, LongSupplier ticker) {
    this.notificationLog = notificationLog;
    this.routing = new Routing(config.route());
    this.inhibition = new Inhibition(config.inhibitRules());
    this.mute = new Mute(silences::muting, inhibition);
    this.budget = new FloodBudget(config::maxPerMinute);
    this.unbudgeted = config.receivers().stream().map(Receiver::name).filter(r -> !config.budgeted(r))
        .collect(Collectors.toSet());
    for (Notifier n : notifiers) {
      queues.put(n.name(), new ReceiverQueue(n, minInterval(config, n.name()), backoff));
    }
    this.ticker = ticker;
    this.stages = Stage.builder()
        .then(this::mute)
        .then(this::dedup)
        .then(this::throttle)
        .then(this::decide)
        .then(this::dispatch)
        .build();
  }

  /** One alert through the stages: routed once, muted once, then each receiver's delivery. */
  void handle(Alert alert, Pending pending) {
    Instant now = Instant.now();
    long nowNanos = ticker.getAsLong();
    inhibition.observe(alert);
    List<Routing.Target> targets = routing.targets(alert);
    Optional<Mute.Muted> muted = targets.isEmpty() ? Optional.empty() : mute.check(alert, now);
    for (Routing.Target target : targets) {
      stages.exec(new Delivery(alert, target, now, nowNanos, pending, muted));
    }
  }

  /** mute: a shadow, silenced or inhibited alert goes to no receiver; recorded as such. */
  private boolean mute(Delivery d) {
    if (d.muted.isEmpty()) {
      return true;
    }
    Mute.Muted why = d.muted.get();
    NotifyMetrics.NOTIFICATIONS.labels(d.receiver(), why.outcome()).inc();
    if (why.detail() != null) {
      notificationLog.record(entry(d.receiver(), d.alert.fingerprint(), why.outcome(),
          Notification.eventOf(d.alert, false), d.alert, null, why.detail()));
    }
    return false;
  }

  /** dedup: what the receiver was last sent (or is about to be); the same state is not sent twice. */
  private boolean dedup(Delivery d) {
    d.last = decided.getOrDefault(slot(d.receiver(), d.alert.fingerprint()),
        notificationLog.lastSent(d.receiver(), d.alert.fingerprint()));
    d.event = Notification.eventOf(d.alert, d.last != null);
    if (Dedup.alreadySent(d.alert, d.last)) {
      NotifyMetrics.NOTIFICATIONS.labels(d.receiver(), "duplicate").inc();
      return false;
    }
    return true;
  }

  /** throttle: a count update within the route's repeatInterval is recorded, not sent. */
  private boolean throttle(Delivery d) {
    if (!Throttle.holds(d.event, d.last, d.target.route().repeatInterval(), d.now)) {
      return true;
    }
    NotifyMetrics.NOTIFICATIONS.labels(d.receiver(), "throttled").inc();
    notificationLog.record(entry(d.receiver(), d.alert.fingerprint(), "throttled", d.event, d.alert, null, null));
    return false;
  }

  /** decide: the record waits for this receiver, and the next state of the alert sees this one. */
  private boolean decide(Delivery d) {
    d.pending.add();
    decided.put(slot(d.receiver(), d.alert.fingerprint()),
        entry(d.receiver(), d.alert.fingerprint(), NotificationLog.SENT, d.event, d.alert, null, "decided"));
    return true;
  }

  /**
   * Send again (a notification intended and never recorded), group (a route with groupBy), fold
   * (past the receiver's flood budget), or send now.
   */
  private boolean dispatch(Delivery d) {
    String receiver = d.receiver();
    Route route = d.target.route();
    Notification n = Notification.of(receiver, d.event, d.alert, null);
    String fold;
    if (intended(n)) {
      // the last process stopped between sending this very notification and recording it: the
      // same notification again, alone and with its idempotency key, marked; never in a digest
      submit(n.asPossibleRepeat(), List.of(d.pending));
    } else if (!route.groupBy().isEmpty() && d.event != Notification.Event.UPDATED) {
      grouper.add(receiver, route, d.event, d.alert, d.pending, d.nowNanos);
    } else if (!unbudgeted.contains(receiver) && (fold = budget.fold(receiver, d.alert, d.nowNanos)) != null) {
      // past its command's (or rule's, or the receiver's) share of the minute: in that digest
      NotifyMetrics.NOTIFICATIONS.labels(receiver, "folded").inc();
      grouper.add(receiver, Route.overflow(receiver, fold, route.repeatInterval()), d.event, d.alert, d.pending,
          d.nowNanos);
    } else {
      submit(n, List.of(d.pending));
    }
    return false;
  }

  /** Sends the groups whose wait is over (all of them when {@code all}: replay's end). */
  void sendDue(boolean all) {
    for (Grouper.Due due : grouper.due(ticker.getAsLong(), all)) {
      submit(due.notification(), due.pendings());
    }
  }

  boolean groupsEmpty() {
    return grouper.isEmpty();
  }

  /** These partitions went to another notifier: what was decided for their alerts is its to know. */
  void forget(List<Integer> partitions) {
    notificationLog.forget(partitions);
    decided.keySet().removeIf(k -> partitions.contains(notificationLog.partitionOf(k.substring(k.indexOf('\u0000') + 1))));
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

  private void submit(Notification n, List<Pending> pendings) {
    ReceiverQueue queue = queues.get(n.receiver());
    if (n.isDigest()) {
      NotifyMetrics.NOTIFICATIONS.labels(n.receiver(), "grouped").inc(n.alerts().size() - 1);
    }
    NotificationLog log = notificationLog;
    queue.submit(new ReceiverQueue.Task(n, () -> n.isDigest() ? null : refOf(log.lastSent(n.receiver(), n.key())), x -> {
          String idempotencyKey = x.idempotencyKey(); // once: it hashes every alert of a digest
          log.intend(x.alerts().stream().map(a ->
              entry(x.receiver(), a.fingerprint(), NotificationLog.INTENT, x.event(), a, null, idempotencyKey)).toList());
        },
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

  private static Duration minInterval(ReceiversConfig config, String receiver) {
    return config.receivers().stream().filter(r -> r.name().equals(receiver)).map(Receiver::minInterval)
        .findFirst().orElse(Duration.ZERO);
  }

  /** Stops each receiver's queue. */
  @Override
  public void close() {
    queues.values().forEach(ReceiverQueue::close);
  }
}
