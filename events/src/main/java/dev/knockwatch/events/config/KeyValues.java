package dev.knockwatch.events.config;

import dev.knockwatch.events.config.YamlNode.Entry;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The values of one mapping's keys, read by their {@link Key} declarations: a key's value, or its
 * default when absent. A check across keys (a hop no longer than the window) reports with
 * {@link #problem}, at the key's line.
 */
public final class KeyValues {

  private final String where;
  private final YamlNode holder;
  private final Map<String, YamlNode> given;
  private final Map<Key<?>, Object> read = new HashMap<>();

  /**
   * Values of {@code given} (a key's name to its value), read as {@link #read} is called;
   * {@code where} names the holder in problems ({@code rule retry}), {@code holder} is where a
   * missing key's problem stands.
   */
  public KeyValues(String where, YamlNode holder, Map<String, YamlNode> given) {
    this.where = where;
    this.holder = holder;
    this.given = given;
  }

  /**
   * Reads the mapping {@code node} by {@code keys}: a key not declared is a problem at its line
   * ({@code WHERE: unknown key "k" (known: ...)}), and so is a value its reader refuses or a
   * required key that is missing. Empty after a problem when {@code node} is no mapping.
   */
  public static Optional<KeyValues> of(YamlNode node, String where, List<Key<?>> keys) {
    Set<String> names = new LinkedHashSet<>();
    keys.forEach(k -> names.add(k.name()));
    Optional<Map<String, Entry>> entries = node.mapping(where, names);
    if (entries.isEmpty()) {
      return Optional.empty();
    }
    Map<String, YamlNode> given = new LinkedHashMap<>();
    entries.get().forEach((k, e) -> given.put(k, e.value()));
    KeyValues values = new KeyValues(where, node, given);
    keys.forEach(values::read);
    return Optional.of(values);
  }

  /** Every key's default: the values of a mapping that gives none, with no problem for a required one. */
  public static KeyValues defaults(List<Key<?>> keys) {
    KeyValues values = new KeyValues("defaults", null, Map.of());
    keys.forEach(k -> values.read.put(k, k.fallback()));
    return values;
  }

  /** Reads {@code k}: its value, its default when absent, or nothing after a problem. */
  public void read(Key<?> k) {
    YamlNode node = given.get(k.name());
    if (node == null) {
      String missing = k.missing(where);
      if (missing != null) {
        holder.problem(missing);
      }
      read.put(k, k.fallback());
    } else {
      Object v = k.reader().read(node, where);
      read.put(k, v == null ? k.fallback() : v);
    }
  }

  /** The value of {@code k}: as given, else its default. */
  @SuppressWarnings("unchecked")
  public <T> T get(Key<T> k) {
    if (!read.containsKey(k)) {
      throw new IllegalArgumentException(k.name() + " is not one of the keys read here");
    }
    return (T) read.get(k);
  }

  /** Whether the mapping gives {@code k}. */
  public boolean given(Key<?> k) {
    return given.containsKey(k.name());
  }

  /** The node of {@code k} as given; null when absent. */
  public YamlNode node(Key<?> k) {
    return given.get(k.name());
  }

  /** A problem at {@code k}'s line (the holder's when absent): {@code FILE:LINE: WHERE: message}. */
  public void problem(Key<?> k, String message) {
    given.getOrDefault(k.name(), holder).problem(where + ": " + message);
  }

  /** The text of {@code k} as written. */
  public String text(Key<?> k) {
    YamlNode n = given.get(k.name());
    return n == null ? null : n.text();
  }

  /** Where the values stand, as problems name it. */
  public String where() {
    return where;
  }
}
