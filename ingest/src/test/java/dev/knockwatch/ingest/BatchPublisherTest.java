package dev.knockwatch.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.ViolationEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The hand-over between ingest's reader and Kafka: bounded, answered in any order, committed in order. */
class BatchPublisherTest {

  private final IngestAgentTest.HeldSink sink = new IngestAgentTest.HeldSink();
  private final List<Batch> committed = Collections.synchronizedList(new ArrayList<>());
  private final BatchPublisher publisher = new BatchPublisher(sink, 2, committed::add);
  private final Thread thread = new Thread(publisher, "test-publish");

  BatchPublisherTest() {
    thread.setDaemon(true);
    thread.start();
  }

  @AfterEach
  void stop() {
    thread.interrupt();
  }

  private static Batch batch(int lines) {
    List<Outgoing> records = new ArrayList<>();
    for (int i = 0; i < lines; i++) {
      records.add(new Outgoing.Event(ViolationEvent.builder().eventId("e" + i).build()));
    }
    return new Batch(records, List.of(), lines, false, new HashMap<>());
  }

  @Test
  void batchesAreCommittedInTheOrderTheyWereReadWhateverOrderKafkaAnswersIn() throws Exception {
    Batch first = batch(1);
    Batch second = batch(2);
    publisher.submit(first);
    publisher.submit(second);
    IngestAgentTest.HeldSink.Sent one = sink.next();
    IngestAgentTest.HeldSink.Sent two = sink.next();
    two.done().accept(null);
    awaitDone(second);
    assertThat(publisher.commitAcknowledged()).as("the first is not answered yet").isZero();
    assertThat(publisher.idle()).isFalse();
    one.done().accept(null);
    awaitDone(first);
    assertThat(publisher.commitAcknowledged()).isEqualTo(2);
    assertThat(committed).containsExactly(first, second);
    assertThat(publisher.idle()).isTrue();
  }

  @Test
  void noMoreThanTheBoundAreUnansweredAtOnce() throws Exception {
    publisher.submit(batch(1));
    publisher.submit(batch(1));
    CompletableFuture<Void> third = CompletableFuture.runAsync(() -> {
      try {
        publisher.submit(batch(1));
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      }
    });
    IngestAgentTest.HeldSink.Sent one = sink.next();
    sink.next();
    Thread.sleep(300);
    assertThat(third).as("a third batch waits while two are unanswered").isNotDone();
    one.done().accept(null);
    third.get(10, TimeUnit.SECONDS);
    assertThat(sink.next().records()).hasSize(1);
  }

  @Test
  void afterAFailureLaterBatchesAreDroppedUntilTheReaderResets() throws Exception {
    Batch failed = batch(1);
    publisher.submit(failed);
    sink.next().done().accept(new IllegalStateException("broker down"));
    awaitDone(failed);
    assertThat(publisher.failure()).isEqualTo("broker down");
    Batch later = batch(1);
    publisher.submit(later);
    awaitDone(later);
    assertThat(later.failure).isEqualTo("dropped after an earlier batch failed");
    assertThat(sink.sent).as("the later batch never reached the sink").isEmpty();
    assertThat(publisher.commitAcknowledged()).isZero();
    publisher.drainAndReset();
    assertThat(publisher.failure()).isNull();
    assertThat(publisher.idle()).isTrue();
    Batch again = batch(1);
    publisher.submit(again);
    sink.next().done().accept(null);
    awaitDone(again);
    assertThat(publisher.commitAcknowledged()).isEqualTo(1);
    assertThat(committed).containsExactly(again);
  }

  @Test
  void aBatchAnsweredTwiceCountsOnce() throws Exception {
    Batch b = batch(1);
    publisher.submit(b);
    IngestAgentTest.HeldSink.Sent s = sink.next();
    s.done().accept(null);
    s.done().accept(new IllegalStateException("a late second answer"));
    awaitDone(b);
    assertThat(b.failure).isNull();
    assertThat(publisher.failure()).isNull();
    publisher.drain(); // its permit was given back once: the bound is whole again
    assertThat(publisher.idle()).isFalse(); // answered, not yet committed
    assertThat(publisher.commitAcknowledged()).isEqualTo(1);
    assertThat(publisher.idle()).isTrue();
  }

  @Test
  void aBatchsEventsCountAsPublishedWhenKafkaTakesItNotWhenItFails() throws Exception {
    io.prometheus.client.Counter counter = io.prometheus.client.Counter.build().name("test_published").help("t").create();
    Batch taken = new Batch(List.of(), List.of(), 3, false, new HashMap<>(java.util.Map.of(counter.labels(), new int[] {3})));
    Batch refused = new Batch(List.of(), List.of(), 2, false, new HashMap<>(java.util.Map.of(counter.labels(), new int[] {2})));
    publisher.submit(taken);
    sink.next().done().accept(null);
    awaitDone(taken);
    assertThat(counter.get()).as("counted at the ack, before the reader commits it").isEqualTo(3);
    publisher.submit(refused);
    sink.next().done().accept(new IllegalStateException("broker down"));
    awaitDone(refused);
    assertThat(counter.get()).isEqualTo(3);
  }

  private static void awaitDone(Batch b) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    while (!b.done && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertThat(b.done).isTrue();
  }
}
