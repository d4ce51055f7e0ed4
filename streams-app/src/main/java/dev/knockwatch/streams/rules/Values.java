package dev.knockwatch.streams.rules;

import dev.knockwatch.events.config.YamlNode;
import java.util.HashMap;
import java.util.Map;

/**
 * The values of one rule's detector keys, as {@link PolicyLoader} read them from its
 * {@link Setting}s: a key's value, or its default when absent. A detector's checks across keys
 * (a hop no longer than the window) report with {@link #problem}, at the key's line.
 */
public final class Values {

  private final String where;
  private final YamlNode rule;
  private final Map<String, YamlNode> given;
  private final Map<Setting<?>, Object> read = new HashMap<>();

  Values(String where, YamlNode rule, Map<String, YamlNode> given) {
    this.where = where;
    this.rule = rule;
    this.given = given;
  }

  /** Reads {@code s}: its value, its default when absent, or nothing after a problem (then the rule is left out). */
  void read(Setting<?> s) {
    YamlNode node = given.get(s.name());
    if (node == null) {
      String missing = s.missing(where);
      if (missing != null) {
        rule.problem(missing);
      }
      read.put(s, s.fallback());
    } else {
      Object v = s.reader().read(node, where);
      read.put(s, v == null ? s.fallback() : v);
    }
  }

  /** The value of {@code s}: as given, else its default. */
  @SuppressWarnings("unchecked")
  public <T> T get(Setting<T> s) {
    if (!read.containsKey(s)) {
      throw new IllegalArgumentException(s.name() + " is not one of this detector's keys");
    }
    return (T) read.get(s);
  }

  /** Whether the rule gives {@code s}. */
  public boolean given(Setting<?> s) {
    return given.containsKey(s.name());
  }

  /** A problem at {@code s}'s line (the rule's when absent): {@code FILE:LINE: rule ID: message}. */
  public void problem(Setting<?> s, String message) {
    given.getOrDefault(s.name(), rule).problem(where + ": " + message);
  }

  /** The text of {@code s} as written. */
  public String text(Setting<?> s) {
    YamlNode n = given.get(s.name());
    return n == null ? null : n.text();
  }
}
