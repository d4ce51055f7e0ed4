package dev.knockwatch.events.config;

import dev.knockwatch.events.Durations;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * A value of a {@link YamlFile} with the line it stands on: a scalar, a mapping or a list. Its
 * readers never throw; a value of the wrong shape is a problem at its line ({@link #problem}) and
 * reads as absent or empty, so one pass finds every problem of a file.
 */
public final class YamlNode {

  /** A mapping's key and value. */
  public record Entry(YamlNode key, YamlNode value) {
    public String name() {
      return key.text();
    }
  }

  private final YamlFile file;
  private final Node node;

  YamlNode(YamlFile file, Node node) {
    this.file = file;
    this.node = node;
  }

  public int line() {
    return node.getStartMark().getLine() + 1;
  }

  public boolean isScalar() {
    return node instanceof ScalarNode;
  }

  public boolean isMapping() {
    return node instanceof MappingNode;
  }

  public boolean isList() {
    return node instanceof SequenceNode;
  }

  /** YAML's {@code null} or {@code ~}, or nothing after the colon. */
  public boolean isNull() {
    return Tag.NULL.equals(node.getTag());
  }

  /** A scalar's text as written (without quotes); null for a mapping or a list. */
  public String text() {
    return node instanceof ScalarNode s ? s.getValue() : null;
  }

  /** A scalar's text; a problem ({@code what: expected a string}) and null for a mapping or a list. */
  public String string(String what) {
    if (!isScalar()) {
      problem(what + ": expected a string");
      return null;
    }
    return text();
  }

  /** A YAML boolean ({@code true}, {@code false}, and YAML 1.1's yes/no/on/off); empty for anything else. */
  public Optional<Boolean> bool() {
    if (!Tag.BOOL.equals(node.getTag()) || text() == null) {
      return Optional.empty();
    }
    String t = text().toLowerCase(java.util.Locale.ROOT);
    return Optional.of(t.equals("true") || t.equals("yes") || t.equals("on"));
  }

  /** A duration ({@code 250ms}, {@code 30s}, {@code 5m}, {@code 4h}, {@code 1d}); empty after a problem naming it. */
  public Optional<Duration> duration(String what) {
    String text = text();
    Optional<Duration> d = text == null ? Optional.empty() : Durations.parse(text);
    if (d.isEmpty()) {
      problem(what + " \"" + (text == null ? "" : text) + "\" is not a duration (like 30s, 5m, 1h)");
    }
    return d;
  }

  /** The entries of a mapping in file order; a problem ({@code what must be a mapping}) and none for anything else. */
  public List<Entry> entries(String what) {
    if (!(node instanceof MappingNode m)) {
      problem(what + " must be a mapping");
      return List.of();
    }
    return m.getValue().stream().map(t -> new Entry(new YamlNode(file, t.getKeyNode()), new YamlNode(file, t.getValueNode())))
        .toList();
  }

  /**
   * A mapping's entries by key, each key one of {@code allowed}; an unknown key is a problem at its
   * line ({@code what: unknown key "k" (known: ...)}, without {@code what} when null). Empty after
   * a problem when this is not a mapping.
   */
  public Optional<Map<String, Entry>> mapping(String what, Set<String> allowed) {
    if (!isMapping()) {
      problem((what == null ? "the file" : what) + " must be a mapping");
      return Optional.empty();
    }
    Map<String, Entry> out = new LinkedHashMap<>();
    for (Entry e : entries(what)) {
      String key = e.name();
      if (!allowed.contains(key)) {
        e.key().problem((what == null ? "" : what + ": ") + "unknown key \"" + key + "\" (known: "
            + allowed.stream().sorted().collect(Collectors.joining(", ")) + ")");
      } else {
        out.put(key, e);
      }
    }
    return Optional.of(out);
  }

  /** A list's items; a problem ({@code what must be a list}) and none for anything else. */
  public List<YamlNode> list(String what) {
    if (!(node instanceof SequenceNode s)) {
      problem(what + " must be a list");
      return List.of();
    }
    return s.getValue().stream().map(n -> new YamlNode(file, n)).toList();
  }

  /** A scalar as a list of one, or a list's items. */
  public List<YamlNode> oneOrMany(String what) {
    return isScalar() ? List.of(this) : list(what);
  }

  /** A problem at this value's line: {@code FILE:LINE: message}. */
  public void problem(String message) {
    file.problem(line(), message);
  }

  public YamlFile file() {
    return file;
  }

  @Override
  public String toString() {
    return file.name() + ":" + line();
  }
}
