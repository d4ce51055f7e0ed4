package dev.knockwatch.streams.rules;

import dev.knockwatch.events.config.YamlNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

/**
 * One key a detector's rules take in rules.yaml, declared once, as Kafka's {@code ConfigDef}
 * declares a setting: its name, its type, its default, how its value is checked, and a line of
 * doc. {@link PolicyLoader} reads every key from these declarations and README's rules reference
 * is made from them ({@code RulesReference}).
 *
 * @param type the value's type, as the reference writes it ({@code duration}, {@code one of host, path})
 * @param fallback the value when the key is absent; null when the key is required or has no default
 * @param defaultText the default as the reference writes it ({@code 5m}, {@code required}, {@code none})
 * @param reader how a given value is read and checked: null after a problem at its line
 */
public record Setting<T>(String name, String type, T fallback, String defaultText, String doc, Reader<T> reader) {

  /** Reads one given value: {@code where} is the rule ({@code rule retry}); null after a problem. */
  @FunctionalInterface
  public interface Reader<T> {
    T read(YamlNode value, String where);
  }

  /** A required key's problem when it is missing; null for a key with a default. */
  public String missing(String where) {
    return reader instanceof Required<T> r ? r.missing(where) : null;
  }

  private interface Required<T> extends Reader<T> {
    String missing(String where);
  }

  /** A duration ({@code 30s}, {@code 5m}, {@code 1h}, {@code 250ms}, {@code 1d}), longer than zero unless {@code zeroAllowed}. */
  public static Setting<Duration> duration(String name, Duration fallback, boolean zeroAllowed, String doc) {
    return new Setting<>(name, "duration", fallback, fallback == null ? "none" : human(fallback), doc, (node, where) -> {
      Duration d = node.duration(where + ": " + name).orElse(null);
      if (d != null && d.isZero() && !zeroAllowed) {
        node.problem(where + ": " + name + " must be longer than zero");
        return null;
      }
      return d;
    });
  }

  /** A required whole number from 1 to {@code max}; past {@code max}, the problem says {@code why}. */
  public static Setting<Integer> wholeNumber(String name, int max, String why, String doc) {
    Required<Integer> reader = new Required<>() {
      @Override
      public Integer read(YamlNode node, String where) {
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
      }

      @Override
      public String missing(String where) {
        return where + ": " + name + " must be a whole number of at least 1, not missing";
      }
    };
    return new Setting<>(name, max == Integer.MAX_VALUE ? "whole number ≥ 1" : "whole number, 1 to " + max, null,
        "required", doc, reader);
  }

  /** One of {@code values}, each by its name in rules.yaml ({@code nameOf}). */
  public static <E> Setting<E> oneOf(String name, List<E> values, Function<E, String> nameOf, E fallback, String doc) {
    String names = String.join(", ", values.stream().map(nameOf).toList());
    return new Setting<>(name, "one of " + names, fallback, fallback == null ? "none" : nameOf.apply(fallback), doc,
        (node, where) -> {
          E e = values.stream().filter(v -> nameOf.apply(v).equals(node.text())).findFirst().orElse(null);
          if (e == null) {
            node.problem(where + ": " + name + " \"" + node.text() + "\" is not one of " + names);
          }
          return e;
        });
  }

  /** A required list of {@code type}'s constants by their names in rules.yaml; each wrong one is a problem. */
  public static <E extends Enum<E>> Setting<Set<E>> setOf(String name, Class<E> type, Function<E, String> nameOf,
      String noun, String doc) {
    String names = String.join(", ", EnumSet.allOf(type).stream().map(nameOf).toList());
    Required<Set<E>> reader = new Required<>() {
      @Override
      public Set<E> read(YamlNode node, String where) {
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
      }

      @Override
      public String missing(String where) {
        return where + ": " + name + " is missing (a list of " + names + ")";
      }
    };
    return new Setting<>(name, "list of " + names, null, "required", doc, reader);
  }

  /** A list of non-empty strings (stripped), {@code fallback} when absent. */
  public static Setting<List<String>> strings(String name, String type, List<String> fallback, String defaultText,
      String doc) {
    return new Setting<>(name, type, fallback, defaultText, doc, (node, where) -> {
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

  /** {@code per}: what a rule counts and groups by. Every detector whose state or alerts a task could share takes it. */
  public static final Setting<Grain> PER = oneOf("per", List.of(Grain.values()), Grain::wireName, Grain.COMMAND,
      "what the rule counts and raises one alert per: a tool call's command, the task (one prompt), the session, the agent");

  /** {@code 30s}, {@code 5m}, {@code 1h}: a duration as rules.yaml writes it. */
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
