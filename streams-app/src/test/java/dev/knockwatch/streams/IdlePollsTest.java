package dev.knockwatch.streams;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.streams.state.PunctuatedWork;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.KafkaClientSupplier;
import org.junit.jupiter.api.Test;

/** Which polls of an app's consumers wait long: after an empty one, while the app runs and no punctuated work is under way. */
class IdlePollsTest {

  static final Duration ASKED = Duration.ofMillis(100);

  /** A consumer that records the wait each poll was given, and answers with the next of {@code answers} (true: a record). */
  static final class Polled {
    final List<Duration> waits = new ArrayList<>();
    final List<Boolean> answers = new ArrayList<>();
    int polls;

    @SuppressWarnings("unchecked")
    Consumer<byte[], byte[]> consumer() {
      return (Consumer<byte[], byte[]>) Proxy.newProxyInstance(Consumer.class.getClassLoader(),
          new Class<?>[] {Consumer.class}, (proxy, method, args) -> {
            if (!method.getName().equals("poll")) {
              return null;
            }
            waits.add((Duration) args[0]);
            boolean record = polls < answers.size() && answers.get(polls);
            polls++;
            TopicPartition tp = new TopicPartition("t", 0);
            return record ? new ConsumerRecords<>(Map.of(tp, List.of(new ConsumerRecord<>("t", 0, 0L, new byte[0],
                new byte[0]))), Map.of()) : ConsumerRecords.empty();
          });
    }
  }

  static final class Clients implements KafkaClientSupplier {
    final Polled main = new Polled();
    final Polled global = new Polled();
    final Polled restore = new Polled();

    public Producer<byte[], byte[]> getProducer(Map<String, Object> config) {
      return null;
    }

    public Consumer<byte[], byte[]> getConsumer(Map<String, Object> config) {
      return main.consumer();
    }

    public Consumer<byte[], byte[]> getRestoreConsumer(Map<String, Object> config) {
      return restore.consumer();
    }

    public Consumer<byte[], byte[]> getGlobalConsumer(Map<String, Object> config) {
      return global.consumer();
    }
  }

  @Test
  void aPollAfterAnEmptyOneWaitsASecondWhileTheAppRunsAndAsAskedOtherwise() {
    Clients clients = new Clients();
    AtomicBoolean running = new AtomicBoolean(true);
    IdlePolls polls = new IdlePolls(clients, running::get);
    for (Polled p : List.of(clients.main, clients.global)) {
      Consumer<byte[], byte[]> c = p == clients.main ? polls.getConsumer(Map.of()) : polls.getGlobalConsumer(Map.of());
      p.answers.addAll(List.of(false, false, true, false, false, false, false));
      running.set(true);
      c.poll(ASKED); // the first: as asked
      c.poll(ASKED); // after an empty one: long
      c.poll(ASKED); // after an empty one: long (it answers a record)
      c.poll(ASKED); // after a record: as asked, so the records' commit comes in its turn
      running.set(false);
      c.poll(ASKED); // starting, rebalancing or stopping: as asked
      running.set(true);
      PunctuatedWork.begin();
      try {
        c.poll(ASKED); // an index being built a batch a punctuation: as asked
      } finally {
        PunctuatedWork.done();
      }
      c.poll(ASKED);
      assertThat(p.waits).containsExactly(ASKED, IdlePolls.IDLE_POLL, IdlePolls.IDLE_POLL, ASKED, ASKED, ASKED,
          IdlePolls.IDLE_POLL);
    }
    polls.getRestoreConsumer(Map.of()).poll(ASKED);
    polls.getRestoreConsumer(Map.of()).poll(ASKED);
    assertThat(clients.restore.waits).as("the restore consumer's polls").containsExactly(ASKED, ASKED);
  }
}
