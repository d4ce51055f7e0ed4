package dev.knockwatch.streams.rules;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;

/**
 * Every detector on the class path, found once through {@link ServiceLoader}
 * ({@code META-INF/services/dev.knockwatch.streams.rules.Detector}: one line per detector, in the
 * order rules check, the banner and README's reference list them). Nothing else lists detectors, so
 * this package, below them, reads their rules without importing one.
 */
public final class Detectors {

  public static final List<Detector<?>> ALL;
  private static final Map<Class<?>, Detector<?>> BY_CLASS = new HashMap<>();

  static {
    List<Detector<?>> all = ServiceLoader.load(Detector.class, Detectors.class.getClassLoader()).stream()
        .<Detector<?>>map(p -> p.get()).toList();
    all.forEach(d -> BY_CLASS.put(d.getClass(), d));
    ALL = all;
  }

  private Detectors() {}

  /** The detector of this name in rules.yaml; null when none is. */
  public static Detector<?> named(String name) {
    return ALL.stream().filter(d -> d.spec().name().equals(name)).findFirst().orElse(null);
  }

  /** The detector whose settings these are: the class they are nested in. */
  @SuppressWarnings("unchecked")
  public static <S extends Detector.Settings> Detector<S> of(S settings) {
    Detector<?> d = BY_CLASS.get(settings.getClass().getEnclosingClass());
    if (d == null) {
      throw new IllegalStateException(settings.getClass().getName() + " is not nested in a registered detector's class");
    }
    return (Detector<S>) d;
  }
}
