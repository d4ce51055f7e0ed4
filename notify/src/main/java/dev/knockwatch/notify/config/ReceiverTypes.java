package dev.knockwatch.notify.config;

import dev.knockwatch.notify.spi.Notifier;
import dev.knockwatch.notify.spi.Receiver;
import dev.knockwatch.notify.spi.ReceiverType;
import dev.knockwatch.notify.spi.ReceiverValues;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.ServiceLoader;

/**
 * Every receiver type: the {@link ReceiverType}s on the class path, found once through
 * {@link ServiceLoader} ({@code META-INF/services/dev.knockwatch.notify.spi.ReceiverType}: one line
 * per type), in that file's order. Nothing else lists receiver types.
 */
public final class ReceiverTypes {

  private static final List<ReceiverType<?>> ALL = load();

  private ReceiverTypes() {}

  private static List<ReceiverType<?>> load() {
    List<ReceiverType<?>> all = new ArrayList<>();
    for (ReceiverType<?> t : ServiceLoader.load(ReceiverType.class, ReceiverTypes.class.getClassLoader())) {
      if (all.stream().anyMatch(o -> o.name().equals(t.name()) || o.receiverClass() == t.receiverClass())) {
        throw new IllegalStateException("two receiver types share the name " + t.name() + " or the record "
            + t.receiverClass().getName() + ": " + t.getClass().getName());
      }
      all.add(t);
    }
    return List.copyOf(all);
  }

  public static List<ReceiverType<?>> all() {
    return ALL;
  }

  /** The type named {@code name} in receivers.yaml's {@code type}. */
  public static Optional<ReceiverType<?>> named(String name) {
    return ALL.stream().filter(t -> t.name().equals(name)).findFirst();
  }

  /** {@code slack, pagerduty, ...}: every type's name, for messages. */
  public static String names() {
    return String.join(", ", ALL.stream().map(ReceiverType::name).toList());
  }

  /** The type whose record {@code r} is. */
  public static ReceiverType<?> of(Receiver r) {
    return ALL.stream().filter(t -> t.receiverClass().isInstance(r)).findFirst()
        .orElseThrow(() -> new IllegalArgumentException(r.getClass().getName() + " is no registered receiver type's"));
  }

  /** What {@code rules check} prints of {@code r}, every secret masked. */
  public static String describe(Receiver r) {
    return describe(of(r), r);
  }

  /** The notifier that sends to {@code r}. */
  public static Notifier notifier(Receiver r, ReceiverType.Context context) {
    return notifier(of(r), r, context);
  }

  /** A receiver of {@code type} named {@code name}, with every key at its default. */
  static Receiver withDefaults(String type, String name) {
    ReceiverType<?> t = named(type).orElseThrow();
    return t.receiver(name, ReceiverValues.defaults(t.keys()));
  }

  private static <R extends Receiver> String describe(ReceiverType<R> type, Receiver r) {
    return type.describe(type.receiverClass().cast(r));
  }

  private static <R extends Receiver> Notifier notifier(ReceiverType<R> type, Receiver r, ReceiverType.Context context) {
    return type.notifier(type.receiverClass().cast(r), context);
  }
}
