package dev.knockwatch.notify.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.Alert;
import dev.knockwatch.notify.Fixtures;
import dev.knockwatch.notify.spi.Notification;
import dev.knockwatch.notify.spi.Notifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The retry and send stages: one receiver's queue against a scripted notifier. */
class ReceiverQueueTest {

  private static final Backoff FAST = new Backoff(Duration.ofMillis(1), Duration.ofMillis(5), Duration.ofSeconds(30));

  /** Answers from a script, then delivers; records every notification it was given. */
  private static final class Scripted implements Notifier {
    final Deque<Result> script = new ConcurrentLinkedDeque<>();
    final List<Notification> seen = Collections.synchronizedList(new ArrayList<>());
    final CountDownLatch gate;
    final CountDownLatch entered = new CountDownLatch(1);

    Scripted(CountDownLatch gate, Result... answers) {
      this.gate = gate;
      script.addAll(List.of(answers));
    }

    @Override
    public String name() {
      return "scripted";
    }

    @Override
    public Result notify(Notification n) {
      entered.countDown();
      try {
        gate.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      seen.add(n);
      Result r = script.poll();
      return r == null ? Result.ok("ref-" + seen.size()) : r;
    }
  }

  private static Notification of(Alert.Severity severity, String key) {
    Alert a = Fixtures.offRole();
    Alert alert = Alert.firing(a.rule(), a.commandId()).fingerprint(key).severity(severity).status(a.status())
        .agentId(a.agentId()).role(a.role()).host(a.host()).port(a.port()).count(a.count())
        .windowStart(a.windowStart()).windowEnd(a.windowEnd()).firstSeen(a.firstSeen()).lastSeen(a.lastSeen())
        .summary(a.summary()).sampleEventIds(a.sampleEventIds()).sources(a.sources())
        .policyVersion(a.policyVersion()).build();
    return Notification.of("scripted", Notification.Event.FIRING, alert, null);
  }

  @Test
  void aRetryableFailureIsTriedAgainUntilDelivered() throws InterruptedException {
    Scripted n = new Scripted(new CountDownLatch(0), Notifier.Result.failed(true, "HTTP 503"),
        Notifier.Result.ofStatus(429, "0"), Notifier.Result.failed(true, "ConnectException"));
    LinkedBlockingQueue<Notifier.Result> done = new LinkedBlockingQueue<>();
    try (ReceiverQueue q = new ReceiverQueue(n, Duration.ZERO, FAST)) {
      q.submit(new ReceiverQueue.Task(of(Alert.Severity.PAGE, "k1"), done::add));
      Notifier.Result r = done.poll(30, TimeUnit.SECONDS);
      assertThat(r).isNotNull();
      assertThat(r.delivered()).isTrue();
      assertThat(n.seen).hasSize(4).extracting(Notification::key).containsOnly("k1");
    }
  }

  @Test
  void aFinalRefusalAndAnExpiredDeadlineGiveUp() throws InterruptedException {
    Scripted n = new Scripted(new CountDownLatch(0), Notifier.Result.ofStatus(400, null));
    LinkedBlockingQueue<Notifier.Result> done = new LinkedBlockingQueue<>();
    try (ReceiverQueue q = new ReceiverQueue(n, Duration.ZERO, FAST)) {
      q.submit(new ReceiverQueue.Task(of(Alert.Severity.PAGE, "k1"), done::add));
      assertThat(done.poll(30, TimeUnit.SECONDS)).satisfies(r -> assertThat(r.detail()).isEqualTo("HTTP 400"));
      assertThat(n.seen).as("a 4xx is not tried again").hasSize(1);
    }
    Scripted down = new Scripted(new CountDownLatch(0));
    for (int i = 0; i < 1_000; i++) {
      down.script.add(Notifier.Result.failed(true, "HTTP 503"));
    }
    Backoff shortLived = new Backoff(Duration.ofMillis(1), Duration.ofMillis(2), Duration.ofMillis(50));
    try (ReceiverQueue q = new ReceiverQueue(down, Duration.ZERO, shortLived)) {
      q.submit(new ReceiverQueue.Task(of(Alert.Severity.PAGE, "k2"), done::add));
      assertThat(done.poll(30, TimeUnit.SECONDS)).satisfies(r -> {
        assertThat(r.delivered()).isFalse();
        assertThat(r.detail()).isEqualTo("HTTP 503");
      });
      assertThat(down.seen.size()).as("tried more than once, and stopped well before the script ran out")
          .isBetween(2, 999);
    }
  }

  @Test
  void aPageQueuedBehindWarningsIsSentFirst() throws InterruptedException {
    CountDownLatch gate = new CountDownLatch(1);
    Scripted n = new Scripted(gate);
    LinkedBlockingQueue<Notifier.Result> done = new LinkedBlockingQueue<>();
    try (ReceiverQueue q = new ReceiverQueue(n, Duration.ZERO, FAST)) {
      q.submit(new ReceiverQueue.Task(of(Alert.Severity.WARNING, "w0"), done::add));
      assertThat(n.entered.await(30, TimeUnit.SECONDS)).as("w0 is in hand, held at the gate").isTrue();
      for (int i = 1; i <= 5; i++) {
        q.submit(new ReceiverQueue.Task(of(Alert.Severity.WARNING, "w" + i), done::add));
      }
      q.submit(new ReceiverQueue.Task(of(Alert.Severity.PAGE, "page"), done::add));
      gate.countDown();
      for (int i = 0; i < 7; i++) {
        assertThat(done.poll(30, TimeUnit.SECONDS)).isNotNull();
      }
      List<String> order = n.seen.stream().map(Notification::key).toList();
      assertThat(order.subList(1, 7)).as("after the one in hand: the page, then the warnings oldest first")
          .containsExactly("page", "w1", "w2", "w3", "w4", "w5");
    }
  }

  @Test
  void backoffIsJitteredUnderItsCapAndNeverSoonerThanRetryAfter() {
    Backoff b = new Backoff(Duration.ofMillis(500), Duration.ofSeconds(60), Duration.ofMinutes(10));
    Random random = new Random(1);
    for (int attempt = 0; attempt < 40; attempt++) {
      Duration d = b.delay(attempt, null, random);
      assertThat(d).isLessThanOrEqualTo(Duration.ofMillis(Math.min(60_000, 500L << Math.min(attempt, 20))));
      assertThat(b.delay(attempt, Duration.ofSeconds(90), random)).isEqualTo(Duration.ofSeconds(90));
    }
  }
}
