package dev.knockwatch.notify.config;

import static dev.knockwatch.notify.config.RouteReader.value;

import dev.knockwatch.events.config.Key;
import dev.knockwatch.events.config.KeyValues;
import dev.knockwatch.events.config.YamlFile;
import dev.knockwatch.events.config.YamlNode;
import dev.knockwatch.events.config.YamlNode.Entry;
import dev.knockwatch.notify.spi.Receiver;
import dev.knockwatch.notify.spi.ReceiverType;
import dev.knockwatch.notify.spi.ReceiverValues;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * {@code receivers.yaml} in the alert-rules directory: the receivers, the route tree (or the
 * flat list of routes it replaced, read as the children of a root with no receiver), the inhibit
 * rules, and the console link ({@code publicUrl}). A receiver is read by the keys its type
 * declares ({@link ReceiverTypes}); string values may use {@code ${VAR}} and
 * {@code ${VAR:-default}} from the environment, and each secret also has a {@code *File} form
 * ({@link ReceiverValues}). Every problem is collected; none of them quotes a secret's value.
 * Without the file, every alert goes to the console.
 */
public record ReceiversConfig(List<Receiver> receivers, Route route, String publicUrl,
    List<InhibitRule> inhibitRules, Map<String, Integer> maxPerMinute) {

  public ReceiversConfig {
    maxPerMinute = Map.copyOf(maxPerMinute);
  }

  public ReceiversConfig(List<Receiver> receivers, Route route, String publicUrl) {
    this(receivers, route, publicUrl, List.of(), Map.of());
  }

  public static final String FILE = "receivers.yaml";
  /** Past this many notifications in a minute, a receiver's next ones are folded into one digest a minute. */
  public static final int DEFAULT_MAX_PER_MINUTE = 60;

  /** The keys of every receiver, before its type's own: the type's are read only once its type is known. */
  static final Key<String> NAME = Key.of("name", "string", null, "required", "the receiver's name in routes",
      (node, where) -> node.text());
  static final Key<String> TYPE = Key.of("type", "one of the receiver types", null, "required",
      "what the receiver is", (node, where) -> node.text());
  /** Of every budgeted type ({@link ReceiverType#budgeted}). */
  static final Key<Integer> MAX_PER_MINUTE = Key.of("maxPerMinute", "whole number, 1 to 99999", null,
      String.valueOf(DEFAULT_MAX_PER_MINUTE), "past this many notifications in a minute, one digest a minute",
      (cap, where) -> {
        String text = cap.text();
        if (text == null || !text.matches("[0-9]{1,5}") || Integer.parseInt(text) < 1) {
          cap.problem(where + ": maxPerMinute: expected a whole number from 1 to 99999");
          return null;
        }
        return Integer.parseInt(text);
      });

  /** Every alert to one console receiver: what {@code up} does without receivers.yaml. */
  public static ReceiversConfig consoleOnly() {
    return new ReceiversConfig(List.of(ReceiverTypes.withDefaults("console", "console")),
        Route.leaf(List.of(), List.of("console")), null);
  }

  public static ReceiversConfig load(Path dir) {
    return load(dir, System.getenv());
  }

  public static ReceiversConfig load(Path dir, Map<String, String> env) {
    Path file = dir.resolve(FILE);
    if (!Files.exists(file)) {
      return consoleOnly();
    }
    YamlFile yaml = new YamlFile(file);
    ReceiversConfig config = yaml.read(file).flatMap(yaml::parse).map(root -> new Reader(env).read(root)).orElse(null);
    if (config == null && yaml.problemCount() == 0) {
      yaml.problem("expected a mapping with receivers and routes");
    }
    yaml.throwIfProblems();
    return config;
  }

  public Receiver receiver(String name) {
    return receivers.stream().filter(r -> r.name().equals(name)).findFirst().orElseThrow();
  }

  /** The configuration as YAML-like text, every secret masked: what {@code rules check} prints. */
  public String dump() {
    StringBuilder b = new StringBuilder("receivers:\n");
    receivers.forEach(r -> b.append("  ").append(r.name()).append(": ").append(ReceiverTypes.describe(r)).append('\n'));
    if (!maxPerMinute.isEmpty()) {
      b.append("maxPerMinute (past it, one digest a minute):\n");
      new java.util.TreeMap<>(maxPerMinute).forEach((k, v) -> b.append("  ").append(k).append(": ").append(v).append('\n'));
    }
    b.append("route (a child takes an alert it matches, the first one unless it continues):\n");
    tree(b, route, "root", "  ");
    if (!inhibitRules.isEmpty()) {
      b.append("inhibitRules (while a source fires, its targets are not notified):\n");
      inhibitRules.forEach(r -> b.append("  - ").append(r.describe()).append('\n'));
    }
    if (publicUrl != null) {
      b.append("publicUrl: ").append(publicUrl).append('\n');
    }
    return b.toString();
  }

  private static void tree(StringBuilder b, Route r, String path, String indent) {
    b.append(indent).append(path).append(": ").append(r.describe()).append('\n');
    for (int i = 0; i < r.routes().size(); i++) {
      tree(b, r.routes().get(i), (path.equals("root") ? "" : path + ".") + (i + 1), indent + "  ");
    }
  }

  /** The receivers alerts may reach past {@link #DEFAULT_MAX_PER_MINUTE} or their own cap; 0 is no cap. */
  public int maxPerMinute(String receiver) {
    return maxPerMinute.getOrDefault(receiver, budgeted(receiver) ? DEFAULT_MAX_PER_MINUTE : 0);
  }

  /** Whether a receiver's notifications are budgeted: not a terminal's ({@link ReceiverType#budgeted}). */
  public boolean budgeted(String receiver) {
    return ReceiverTypes.of(receiver(receiver)).budgeted();
  }

  /** One pass over the file's nodes: every problem is a problem of its {@link YamlFile}, at its line. */
  private static final class Reader {
    private final Map<String, String> env;
    private final Map<String, Integer> maxPerMinute = new LinkedHashMap<>();
    private YamlFile file;

    Reader(Map<String, String> env) {
      this.env = env;
    }

    ReceiversConfig read(YamlNode root) {
      file = root.file();
      if (!root.isMapping()) {
        root.problem("expected a mapping with receivers and routes");
        return null;
      }
      Map<String, Entry> top = root.mapping(null, Set.of("receivers", "route", "routes", "publicUrl", "inhibitRules")).orElseThrow();
      List<Receiver> receivers = new ArrayList<>();
      Set<String> names = new LinkedHashSet<>();
      List<YamlNode> rs = RouteReader.list(top.get("receivers"), "receivers");
      for (int i = 0; i < rs.size(); i++) {
        YamlNode node = rs.get(i);
        YamlNode nameNode = node.isMapping() ? value(node, "name") : null;
        String name = nameNode == null ? null : nameNode.text();
        if (name != null && names.contains(name)) {
          nameNode.problem("receiver " + name + ": the name is used twice");
          continue;
        }
        Receiver r = receiver(node, "receiver " + (i + 1));
        if (name != null) {
          names.add(name); // even when it has problems: routes naming it are not wrong too
        }
        if (r != null) {
          receivers.add(r);
        }
      }
      RouteReader routing = new RouteReader(names);
      Route route = null;
      if (top.containsKey("route") && top.containsKey("routes")) {
        top.get("routes").key().problem("give route (the tree) or routes (the flat list), not both");
      } else if (top.containsKey("route")) {
        route = routing.tree(top.get("route").value());
      } else {
        List<YamlNode> ro = RouteReader.list(top.get("routes"), "routes");
        if (ro.isEmpty() && !receivers.isEmpty()) {
          (top.containsKey("routes") ? top.get("routes").key() : root).problem(
              "route: none, so no alert would reach a receiver");
        }
        route = routing.flat(ro);
      }
      String publicUrl = top.containsKey("publicUrl")
          ? ReceiverValues.expanded(top.get("publicUrl").value(), "publicUrl", env) : null;
      List<InhibitRule> inhibitRules = new ArrayList<>();
      List<YamlNode> ir = RouteReader.list(top.get("inhibitRules"), "inhibitRules");
      for (int i = 0; i < ir.size(); i++) {
        InhibitRule r = routing.inhibitRule(ir.get(i), "inhibit rule " + (i + 1));
        if (r != null) {
          inhibitRules.add(r);
        }
      }
      return file.problemCount() > 0 ? null
          : new ReceiversConfig(List.copyOf(receivers), route, publicUrl, List.copyOf(inhibitRules), maxPerMinute);
    }

    private Receiver receiver(YamlNode node, String where) {
      if (!node.isMapping()) {
        node.problem(where + ": expected a mapping with name and type");
        return null;
      }
      YamlNode nameNode = value(node, "name");
      if (nameNode == null || nameNode.text() == null || nameNode.text().isBlank()) {
        node.problem(where + ": no name");
        return null;
      }
      String name = nameNode.text();
      where = "receiver " + name;
      YamlNode typeNode = value(node, "type");
      String typeName = typeNode == null ? null : typeNode.text();
      Optional<ReceiverType<?>> type = ReceiverTypes.named(typeName);
      if (type.isEmpty()) {
        (typeNode == null ? node : typeNode).problem(where + ": type "
            + (typeName == null ? "missing" : "\"" + typeName + "\"") + " (one of " + ReceiverTypes.names() + ")");
        return null;
      }
      List<Key<?>> keys = new ArrayList<>(List.of(NAME, TYPE));
      if (type.get().budgeted()) {
        keys.add(MAX_PER_MINUTE);
      }
      keys.addAll(type.get().keys());
      Set<String> names = new LinkedHashSet<>();
      keys.forEach(k -> names.add(k.name()));
      Map<String, YamlNode> given = new LinkedHashMap<>();
      node.mapping(where, names).orElseThrow().forEach((k, e) -> given.put(k, e.value()));
      // counted after the unknown keys: a misspelt key does not hide the checks across the others
      int before = file.problemCount();
      KeyValues values = new KeyValues(where, node, given);
      keys.forEach(values::read);
      if (type.get().budgeted() && values.get(MAX_PER_MINUTE) != null) {
        maxPerMinute.put(name, values.get(MAX_PER_MINUTE));
      }
      Receiver r = type.get().receiver(name, new ReceiverValues(values, node, env, before));
      return file.problemCount() > before ? null : r;
    }
  }

  /** Names of receivers in the order routes would list them: for the start-up banner. */
  public Map<String, String> summary() {
    Map<String, String> out = new LinkedHashMap<>();
    receivers.forEach(r -> out.put(r.name(), ReceiverTypes.of(r).name()));
    return out;
  }
}
