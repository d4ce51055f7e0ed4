package dev.knockwatch.events.config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

/**
 * One key of a configuration mapping, declared once, as Kafka's {@code ConfigDef} declares a
 * setting: its name, its type, its default, how its value is checked, and a line of doc. Rules
 * (rules.yaml), receivers (receivers.yaml) and sources (sources.yaml) declare their keys this way;
 * {@link KeyValues} reads a mapping by its declarations, every problem at its {@code FILE:LINE}, and
 * the references in README and docs/ are made from them.
 *
 * @param type the value's type, as a reference writes it ({@code duration}, {@code one of host, path})
 * @param fallback the value when the key is absent; null when the key is required or has no default
 * @param defaultText the default as a reference writes it ({@code 5m}, {@code required}, {@code none})
 * @param reader how a given value is read and checked: null after a problem at its line
 * @param whenMissing the problem of a mapping without it, after its place; null for a key that may be absent
 */
public record Key<T>(String name, String type, T fallback, String defaultText, String doc, Reader<T> reader,
    String whenMissing) {

  /** Reads one given value: {@code where} names what holds the key ({@code rule retry}); null after a problem. */
  @FunctionalInterface
  public interface Reader<T> {
    T read(YamlNode value, String where);
  }

  /** A key with a default (or none). */
  public static <T> Key<T> of(String name, String type, T fallback, String defaultText, String doc, Reader<T> reader) {
    return new Key<>(name, type, fallback, defaultText, doc, reader, null);
  }

  /** This key, required: absent, the problem is {@code WHERE: NAME missingProblem}. */
  public Key<T> requiredAs(String missingProblem) {
    return new Key<>(name, type, null, "required", doc, reader, name + " " + missingProblem);
  }

  /** This key, required; absent, the problem is {@code WHERE: "NAME" is required}. */
  public Key<T> required() {
    return new Key<>(name, type, null, "required", doc, reader, "\"" + name + "\" is required");
  }

  public boolean isRequired() {
    return whenMissing != null;
  }

  /** The problem of a mapping at {@code where} that lacks this required key; null for a key that may be absent. */
  public String missing(String where) {
    return whenMissing == null ? null : where + ": " + whenMissing;
  }

  /** A string (a scalar), stripped; {@code fallback} when absent. A blank one is a problem. */
  public static Key<String> string(String name, String type, String fallback, String doc) {
    return of(name, type, fallback, fallback == null ? "none" : fallback, doc, (node, where) -> {
      String s = node.string(where + ": " + name);
      if (s != null && s.isBlank()) {
        node.problem(where + ": " + name + " is empty");
        return null;
      }
      return s == null ? null : s.strip();
    });
  }

  /** true or false. */
  public static Key<Boolean> bool(String name, boolean fallback, String doc) {
    return of(name, "true or false", fallback, String.valueOf(fallback), doc, (node, where) -> {
      Boolean b = node.bool().orElse(null);
      if (b == null) {
        node.problem(where + ": " + name + " must be true or false");
      }
      return b;
    });
  }

  /** A duration ({@code 30s}, {@code 5m}, {@code 1h}, {@code 250ms}, {@code 1d}), longer than zero unless {@code zeroAllowed}. */
  public static Key<Duration> duration(String name, Duration fallback, boolean zeroAllowed, String doc) {
    return of(name, "duration", fallback, fallback == null ? "none" : human(fallback), doc, (node, where) -> {
      Duration d = node.duration(where + ": " + name).orElse(null);
      if (d != null && d.isZero() && !zeroAllowed) {
        node.problem(where + ": " + name + " must be longer than zero");
        return null;
      }
      return d;
    });
  }

  /** A time zone (an id or an offset), UTC by default: the clock of a wall that writes its local time with no offset. */
  public static Key<java.time.ZoneId> zone(String name, String doc) {
    return of(name, "a time zone (UTC, Europe/Paris, +02:00)", java.time.ZoneOffset.UTC, "UTC", doc, (node, where) -> {
      String text = node.string(where + ": " + name);
      if (text == null) {
        return null;
      }
      try {
        return java.time.ZoneId.of(text.strip());
      } catch (java.time.DateTimeException e) {
        node.problem(where + ": " + name + " \"" + text + "\" is no time zone (UTC, Europe/Paris, +02:00)");
        return null;
      }
    });
  }

  /** A required whole number from 1 to {@code max}; past {@code max}, the problem says {@code why}. */
  public static Key<Integer> wholeNumber(String name, int max, String why, String doc) {
    Key<Integer> k = of(name, max == Integer.MAX_VALUE ? "whole number ≥ 1" : "whole number, 1 to " + max, null,
        "required", doc, (node, where) -> {
          String text = node.text();
          if (text == null || !text.matches("[0-9]{1,9}") || Integer.parseInt(text) < 1) {
            node.problem(where + ": " + name + " must be a whole number of at least 1, not \"" + text + "\"");
            return null;
          }
          if (Integer.parseInt(text) > max) {
            node.problem(where + ": " + name + " " + text + " is more than " + max + " (" + why + ")");
            return null;
          }
          return Integer.parseInt(text);
        });
    return k.requiredAs("must be a whole number of at least 1, not missing");
  }

  /** One of {@code values}, each by its name in the file ({@code nameOf}). */
  public static <E> Key<E> oneOf(String name, List<E> values, Function<E, String> nameOf, E fallback, String doc) {
    String names = String.join(", ", values.stream().map(nameOf).toList());
    return of(name, "one of " + names, fallback, fallback == null ? "none" : nameOf.apply(fallback), doc,
        (node, where) -> {
          E e = values.stream().filter(v -> nameOf.apply(v).equals(node.text())).findFirst().orElse(null);
          if (e == null) {
            node.problem(where + ": " + name + " \"" + node.text() + "\" is not one of " + names);
          }
          return e;
        });
  }

  /** A required list of {@code type}'s constants by their names in the file; each wrong one is a problem. */
  public static <E extends Enum<E>> Key<Set<E>> setOf(String name, Class<E> type, Function<E, String> nameOf,
      String noun, String doc) {
    String names = String.join(", ", EnumSet.allOf(type).stream().map(nameOf).toList());
    Key<Set<E>> k = of(name, "list of " + names, null, "required", doc, (node, where) -> {
      Set<E> set = EnumSet.noneOf(type);
      for (YamlNode n : node.list(where + ": " + name)) {
        E e = EnumSet.allOf(type).stream().filter(v -> nameOf.apply(v).equals(n.text())).findFirst().orElse(null);
        if (e == null) {
          n.problem(where + ": \"" + n.text() + "\" is not " + noun + " (" + names + ")");
        } else {
          set.add(e);
        }
      }
      return Set.copyOf(set);
    });
    return k.requiredAs("is missing (a list of " + names + ")");
  }

  /** A list of non-empty strings (stripped), {@code fallback} when absent. */
  public static Key<List<String>> strings(String name, String type, List<String> fallback, String defaultText,
      String doc) {
    return of(name, type, fallback, defaultText, doc, (node, where) -> {
      List<String> out = new ArrayList<>();
      for (YamlNode n : node.list(where + ": " + name)) {
        String s = n.text();
        if (s == null || s.isBlank()) {
          n.problem(where + ": " + name + " holds an empty entry");
        } else {
          out.add(s.strip());
        }
      }
      return List.copyOf(out);
    });
  }

  /** {@code 30s}, {@code 5m}, {@code 1h}: a duration as the files write it. */
  public static String human(Duration d) {
    if (d.toSeconds() % 3600 == 0 && !d.isZero()) {
      return d.toHours() + "h";
    }
    if (d.toSeconds() % 60 == 0 && !d.isZero()) {
      return d.toMinutes() + "m";
    }
    return d.toMillis() % 1000 == 0 ? d.toSeconds() + "s" : d.toMillis() + "ms";
  }
}
