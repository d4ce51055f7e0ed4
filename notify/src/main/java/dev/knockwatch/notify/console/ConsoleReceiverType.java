package dev.knockwatch.notify.console;

import dev.knockwatch.events.config.Key;
import dev.knockwatch.notify.spi.Notifier;
import dev.knockwatch.notify.spi.ReceiverType;
import dev.knockwatch.notify.spi.ReceiverValues;
import java.util.List;

/** {@code type: console}: {@link ConsoleReceiver}, printed by {@link ConsoleNotifier}. */
public final class ConsoleReceiverType implements ReceiverType<ConsoleReceiver> {

  @Override
  public String name() {
    return "console";
  }

  @Override
  public String doc() {
    return "one line per notification on the terminal";
  }

  @Override
  public Class<ConsoleReceiver> receiverClass() {
    return ConsoleReceiver.class;
  }

  @Override
  public List<Key<?>> keys() {
    return List.of();
  }

  @Override
  public ConsoleReceiver receiver(String name, ReceiverValues values) {
    return new ConsoleReceiver(name);
  }

  @Override
  public String describe(ConsoleReceiver receiver) {
    return "console";
  }

  @Override
  public Notifier notifier(ConsoleReceiver receiver, Context context) {
    return new ConsoleNotifier(receiver.name(), context.console());
  }

  /** A terminal has no rate limit to protect, and every page is a line of its own. */
  @Override
  public boolean budgeted() {
    return false;
  }
}
