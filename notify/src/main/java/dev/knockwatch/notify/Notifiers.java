package dev.knockwatch.notify;

import dev.knockwatch.notify.config.ReceiverTypes;
import dev.knockwatch.notify.config.ReceiversConfig;
import dev.knockwatch.notify.spi.Notifier;
import dev.knockwatch.notify.spi.ReceiverType;
import java.io.PrintStream;
import java.util.List;

/** Turns receivers.yaml's receivers into notifiers, one per receiver, each by its type. */
public final class Notifiers {

  private Notifiers() {}

  public static List<Notifier> create(ReceiversConfig config, PrintStream console) {
    ReceiverType.Context context = new ReceiverType.Context(config.publicUrl(), console);
    return config.receivers().stream().map(r -> ReceiverTypes.notifier(r, context)).toList();
  }
}
