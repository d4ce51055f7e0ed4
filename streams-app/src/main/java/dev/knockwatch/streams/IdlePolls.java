package dev.knockwatch.streams;

import dev.knockwatch.streams.state.PunctuatedWork;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.streams.KafkaClientSupplier;
import org.apache.kafka.streams.processor.internals.DefaultKafkaClientSupplier;

/**
 * Kafka's clients for an app, whose stream and global threads turn once in five seconds, not
 * fifty times, while the app runs and has nothing to do. Each turn of a thread's loop (its consumer's poll of
 * at most poll.ms, then the tasks' lags, processing, punctuation and commit checks) costs the
 * same with no record as with one, and poll.ms must stay short for a start, which takes its steps
 * one turn at a time (docs/PERFORMANCE.md, "up idle"). So the main and global consumers' poll
 * waits {@link #IDLE_POLL} instead, only after a poll that returned nothing and only while {@code
 * running} holds: a record still ends the wait at once, and a commit due after the last records
 * was made in the empty turn that came before the long one. Not while a processor's
 * {@link PunctuatedWork} is under way. A wall-clock punctuation (an alert's resolve) may run up to
 * that much after its time.
 */
final class IdlePolls implements KafkaClientSupplier {

  static final Duration IDLE_POLL = Duration.ofSeconds(5);

  private final KafkaClientSupplier clients;
  private final BooleanSupplier running;

  /** @param running whether the app runs (not starting, rebalancing or stopping) */
  IdlePolls(BooleanSupplier running) {
    this(new DefaultKafkaClientSupplier(), running);
  }

  /** Over {@code clients} (a test's own). */
  IdlePolls(KafkaClientSupplier clients, BooleanSupplier running) {
    this.clients = clients;
    this.running = running;
  }

  @Override
  public Consumer<byte[], byte[]> getConsumer(Map<String, Object> config) {
    return idle(clients.getConsumer(config));
  }

  @Override
  public Consumer<byte[], byte[]> getGlobalConsumer(Map<String, Object> config) {
    return idle(clients.getGlobalConsumer(config));
  }

  @Override
  public Consumer<byte[], byte[]> getRestoreConsumer(Map<String, Object> config) {
    return clients.getRestoreConsumer(config);
  }

  @Override
  public Producer<byte[], byte[]> getProducer(Map<String, Object> config) {
    return clients.getProducer(config);
  }

  @Override
  public org.apache.kafka.clients.admin.Admin getAdmin(Map<String, Object> config) {
    return clients.getAdmin(config);
  }

  /** How long a poll asked to wait {@code asked} waits, after a poll that returned {@code empty}. */
  Duration pollTime(Duration asked, boolean empty) {
    return empty && running.getAsBoolean() && !PunctuatedWork.underWay() && asked.compareTo(IDLE_POLL) < 0 ? IDLE_POLL : asked;
  }

  @SuppressWarnings("unchecked")
  private Consumer<byte[], byte[]> idle(Consumer<byte[], byte[]> consumer) {
    return (Consumer<byte[], byte[]>) Proxy.newProxyInstance(Consumer.class.getClassLoader(),
        new Class<?>[] {Consumer.class}, new Polls(consumer));
  }

  /** One consumer's polls: the one Consumer method changed; every other goes to the consumer as it is. */
  private final class Polls implements InvocationHandler {
    private final Consumer<byte[], byte[]> consumer;
    private boolean lastEmpty;

    Polls(Consumer<byte[], byte[]> consumer) {
      this.consumer = consumer;
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
      if (method.getName().equals("poll") && args != null && args.length == 1 && args[0] instanceof Duration asked) {
        ConsumerRecords<byte[], byte[]> records = consumer.poll(pollTime(asked, lastEmpty));
        lastEmpty = records.isEmpty();
        return records;
      }
      if (method.getDeclaringClass() == Object.class) {
        return switch (method.getName()) {
          case "equals" -> proxy == args[0];
          case "hashCode" -> System.identityHashCode(proxy);
          default -> "idle-polling " + consumer;
        };
      }
      try {
        return method.invoke(consumer, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
    }
  }
}
