package dev.knockwatch.events;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.regex.Pattern;

/**
 * Every {@link EventSource} on the class path, found once through {@link ServiceLoader}
 * ({@code META-INF/services/dev.knockwatch.events.EventSource}: one line per source), in the order
 * of their wire names. Nothing else lists sources.
 */
public final class EventSources {

  private static final Pattern WIRE_NAME = Pattern.compile("[a-z][a-z0-9-]{0,39}");
  private static final List<EventSource> ALL;
  private static final Map<String, EventSource> BY_NAME = new HashMap<>();
  private static final Map<String, Integer> INDEX = new HashMap<>();

  static {
    List<EventSource> all = new ArrayList<>();
    for (EventSource s : ServiceLoader.load(EventSource.class, EventSources.class.getClassLoader())) {
      if (!WIRE_NAME.matcher(s.wireName()).matches()) {
        throw new IllegalStateException(s.getClass().getName() + ": wire name \"" + s.wireName()
            + "\" is not 1-40 of [a-z0-9-] starting with a letter");
      }
      if (BY_NAME.putIfAbsent(s.wireName(), s) != null) {
        throw new IllegalStateException("two sources are named " + s.wireName() + ": "
            + BY_NAME.get(s.wireName()).getClass().getName() + " and " + s.getClass().getName());
      }
      all.add(s);
    }
    all.sort(java.util.Comparator.comparing(EventSource::wireName));
    ALL = Collections.unmodifiableList(all);
    for (int i = 0; i < ALL.size(); i++) {
      INDEX.put(ALL.get(i).wireName(), i + 1);
    }
  }

  private EventSources() {}

  /** Every source, by wire name. */
  public static List<EventSource> all() {
    return ALL;
  }

  public static Optional<EventSource> named(String wireName) {
    return Optional.ofNullable(wireName == null ? null : BY_NAME.get(wireName));
  }

  /** {@code srt-violation, squid, ...}: every wire name, for messages. */
  public static String names() {
    return String.join(", ", ALL.stream().map(EventSource::wireName).toList());
  }

  /**
   * A small number per source name, for arrays indexed by source: 0 for none, 1 to {@link #count()}
   * for each known source, {@code count() + 1} for any other name (a record no known source wrote).
   */
  public static int index(String wireName) {
    return wireName == null ? 0 : INDEX.getOrDefault(wireName, ALL.size() + 1);
  }

  public static int count() {
    return ALL.size();
  }

  /** A source's name as a metric label: its wire name when known, {@code none} or {@code other} (bounded). */
  public static String label(String wireName) {
    return wireName == null ? "none" : BY_NAME.containsKey(wireName) ? wireName : "other";
  }
}
