package dev.knockwatch.notify.spi;

import dev.knockwatch.events.config.Key;
import java.io.PrintStream;
import java.util.List;

/**
 * A kind of receiver, declared in one place as Kafka's {@code ConfigDef} declares settings: its
 * {@code type} in receivers.yaml, a line of doc, the keys a receiver of it takes ({@link Key}s, each
 * once), how its record is made from their values, what {@code rules check} prints of it, and its
 * notifier. A receiver type is one package under {@code notify/}, registered by one line of
 * {@code META-INF/services/dev.knockwatch.notify.spi.ReceiverType} (docs/ARCHITECTURE.md, "A
 * receiver"); nothing outside its package names it.
 *
 * @param <R> the record a receiver of this type is
 */
public interface ReceiverType<R extends Receiver> {

  /** What a notifier is made with beside its receiver: the console's address for links, and the terminal. */
  record Context(String publicUrl, PrintStream console) {}

  /** Its {@code type} in receivers.yaml. */
  String name();

  /** What it sends where, in one line. */
  String doc();

  Class<R> receiverClass();

  /** The keys a receiver of it takes beside {@code name}, {@code type} and {@code maxPerMinute}, in the order they are read. */
  List<Key<?>> keys();

  /**
   * A receiver named {@code name} from its keys' values, after {@link #keys} were read; a check
   * across keys reports with {@link ReceiverValues#problem}. The receiver is dropped when any of its
   * keys had a problem.
   */
  R receiver(String name, ReceiverValues values);

  /** What {@code rules check} prints of a receiver of it, every secret masked. */
  String describe(R receiver);

  Notifier notifier(R receiver, Context context);

  /**
   * Whether its notifications are budgeted (a command's and a rule's share of the minute, the
   * receiver's {@code maxPerMinute}); a terminal has no rate limit to protect.
   */
  default boolean budgeted() {
    return true;
  }
}
