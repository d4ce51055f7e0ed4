package dev.knockwatch.streams.detect;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Every detector, in the order {@link Detector.Settings} names their settings records: a settings
 * record is nested in its detector's class, which has a constructor without arguments.
 */
public final class Detectors {

  public static final List<Detector<?>> ALL;
  private static final Map<Class<?>, Detector<?>> BY_SETTINGS = new HashMap<>();

  static {
    List<Detector<?>> all = new ArrayList<>();
    for (Class<?> settings : Detector.Settings.class.getPermittedSubclasses()) {
      Class<?> type = settings.getEnclosingClass();
      if (type == null || !Detector.class.isAssignableFrom(type)) {
        throw new IllegalStateException(settings + " is not nested in its detector's class");
      }
      try {
        Detector<?> d = (Detector<?>) type.getDeclaredConstructor().newInstance();
        all.add(d);
        BY_SETTINGS.put(settings, d);
      } catch (ReflectiveOperationException e) {
        throw new IllegalStateException(type + " has no public constructor without arguments", e);
      }
    }
    ALL = List.copyOf(all);
  }

  private Detectors() {}

  /** The detector of this name in rules.yaml; null when none is. */
  public static Detector<?> named(String name) {
    return ALL.stream().filter(d -> d.spec().name().equals(name)).findFirst().orElse(null);
  }

  /** The detector whose settings these are. */
  @SuppressWarnings("unchecked")
  public static <S extends Detector.Settings> Detector<S> of(S settings) {
    return (Detector<S>) BY_SETTINGS.get(settings.getClass());
  }
}
