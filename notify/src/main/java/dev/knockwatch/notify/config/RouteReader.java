package dev.knockwatch.notify.config;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.config.YamlNode;
import dev.knockwatch.events.config.YamlNode.Entry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * The routing part of receivers.yaml: the route tree ({@code route}, as Alertmanager's), the flat
 * list it replaced ({@code routes}, read as the children of a root with no receiver), and
 * {@code inhibitRules}. Every problem is one of the file's, at its line.
 */
final class RouteReader {

  static final int MAX_DEPTH = 16;
  private static final Set<String> NODE_KEYS = Set.of("receiver", "receivers", "matchers", "match", "continue",
      "groupBy", "groupWait", "groupInterval", "repeatInterval", "routes");
  private static final Set<String> MATCH_KEYS = Set.of("severity", "rule", "role", "agent");
  private static final Set<String> INHIBIT_KEYS = Set.of("source", "target", "equal");

  private final Set<String> receivers;

  /** @param receivers the names of the receivers defined, which routes may name */
  RouteReader(Set<String> receivers) {
    this.receivers = receivers;
  }

  /** {@code route:}: the root, which matches every alert and must name a receiver. */
  Route tree(YamlNode node) {
    Route defaults = new Route(List.of(), List.of(), false, List.of(), Route.DEFAULT_GROUP_WAIT,
        Route.DEFAULT_GROUP_INTERVAL, Route.DEFAULT_REPEAT_INTERVAL, List.of());
    return node(node, "route", defaults, 0);
  }

  /**
   * {@code routes:}, the flat form: first match wins unless it continues, which is what a root
   * with no receiver over these routes does. A flat route's groupInterval is its groupWait unless
   * it sets one: a group that sent waits as long as a new one, as before the tree.
   */
  Route flat(List<YamlNode> nodes) {
    Route defaults = new Route(List.of(), List.of(), false, List.of(), Route.DEFAULT_GROUP_WAIT, null,
        Route.DEFAULT_REPEAT_INTERVAL, List.of());
    List<Route> routes = new ArrayList<>();
    for (int i = 0; i < nodes.size(); i++) {
      Route r = node(nodes.get(i), "route " + (i + 1), defaults, 1);
      if (r != null) {
        routes.add(r);
      }
    }
    return Route.root(routes);
  }

  /** One node, its settings inherited from {@code parent}; null after a problem. */
  private Route node(YamlNode node, String where, Route parent, int depth) {
    if (!node.isMapping()) {
      node.problem(where + ": expected a mapping with receiver, matchers and routes");
      return null;
    }
    if (depth > MAX_DEPTH) {
      node.problem(where + ": routes nest deeper than " + MAX_DEPTH + " levels");
      return null;
    }
    Map<String, Entry> m = node.mapping(where, NODE_KEYS).orElseThrow();
    int before = node.file().problemCount();
    boolean root = depth == 0;
    List<Matcher> matchers = new ArrayList<>();
    if (m.containsKey("matchers")) {
      for (YamlNode t : strings(m.get("matchers").value(), where + ": matchers")) {
        try {
          matchers.add(Matcher.parse(t.text()));
        } catch (IllegalArgumentException e) {
          t.problem(where + ": matchers: " + e.getMessage());
        }
      }
    }
    if (value(node, "match") != null) {
      matchers.addAll(match(value(node, "match"), where + ": match"));
    }
    if (root && (m.containsKey("matchers") || m.containsKey("match") || m.containsKey("continue"))) {
      node.problem(where + ": the root route takes every alert: it has no matchers, match or continue");
    }
    List<String> to = parent.receivers();
    if (m.containsKey("receiver") && m.containsKey("receivers")) {
      m.get("receivers").key().problem(where + ": give receiver or receivers, not both");
    }
    YamlNode toNode = Optional.ofNullable(value(node, "receiver")).orElse(value(node, "receivers"));
    if (toNode != null) {
      to = new ArrayList<>();
      for (YamlNode r : strings(toNode, where + ": receiver")) {
        to.add(r.text());
        if (!receivers.contains(r.text())) {
          r.problem(where + ": receiver \"" + r.text() + "\" is not defined");
        }
      }
    }
    if (to.isEmpty()) {
      (toNode == null ? node : toNode).problem(where + ": receivers: none given"
          + (root ? " (the root's receiver gets every alert no child route takes)" : ""));
    }
    List<String> groupBy = parent.groupBy();
    YamlNode groupNode = value(node, "groupBy");
    if (groupNode != null) {
      groupBy = new ArrayList<>();
      for (YamlNode g : strings(groupNode, where + ": groupBy")) {
        groupBy.add(g.text());
        if (!Route.GROUP_FIELDS.contains(g.text())) {
          g.problem(where + ": groupBy: \"" + g.text() + "\" (one of " + fields() + ")");
        }
      }
    }
    Duration groupWait = duration(m, "groupWait", where, parent.groupWait());
    Duration groupInterval = duration(m, "groupInterval", where, parent.groupInterval());
    Duration repeat = duration(m, "repeatInterval", where, parent.repeatInterval());
    boolean cont = false;
    YamlNode contNode = value(node, "continue");
    if (contNode != null) {
      Optional<Boolean> b = contNode.bool();
      if (b.isEmpty()) {
        contNode.problem(where + ": continue: expected true or false");
      }
      cont = b.orElse(false);
    }
    Route self = new Route(matchers, to, cont, groupBy, groupWait, groupInterval == null ? groupWait : groupInterval,
        repeat, List.of());
    List<Route> children = new ArrayList<>();
    List<YamlNode> childNodes = list(m.get("routes"), where + ": routes");
    for (int i = 0; i < childNodes.size(); i++) {
      Route child = node(childNodes.get(i), (root ? "route " : where + ".") + (i + 1), self, depth + 1);
      if (child != null) {
        children.add(child);
      }
    }
    return node.file().problemCount() > before ? null : new Route(matchers, to, cont, groupBy, self.groupWait(),
        self.groupInterval(), repeat, children);
  }

  private static Duration duration(Map<String, Entry> m, String key, String where, Duration inherited) {
    return m.containsKey(key) ? m.get(key).value().duration(where + ": " + key).orElse(Duration.ZERO) : inherited;
  }

  /**
   * The mapping form ({@code severity}, {@code rule} and {@code agent} globs, {@code role}; each
   * one value or a list) as the matchers it means: {@code {severity: [page, critical]}} is
   * {@code severity=~"page|critical"}, {@code {rule: off-*}} is {@code rule=~"off-.*"}.
   */
  List<Matcher> match(YamlNode matchNode, String where) {
    List<Matcher> out = new ArrayList<>();
    if (!matchNode.isMapping()) {
      matchNode.problem(where + ": expected a mapping of severity, rule, role, agent");
      return out;
    }
    for (Entry e : matchNode.entries(where)) {
      if (!MATCH_KEYS.contains(e.name())) {
        e.key().problem(where + ": unknown key \"" + e.name() + "\" (known: agent, role, rule, severity)");
        continue;
      }
      List<String> values = new ArrayList<>(); // each a literal, or a glob of rule or agent
      for (YamlNode v : strings(e.value(), where + ": " + e.name())) {
        if (!e.name().equals("severity")) {
          values.add(v.text());
          continue;
        }
        try {
          values.add(Alert.Severity.valueOf(v.text().toUpperCase(Locale.ROOT)).name().toLowerCase(Locale.ROOT));
        } catch (IllegalArgumentException ex) {
          v.problem(where + ": severity \"" + v.text() + "\" (one of info, warning, page, critical)");
        }
      }
      boolean globs = e.name().equals("rule") || e.name().equals("agent");
      values = values.stream().distinct().toList();
      if (values.size() == 1 && !(globs && isGlob(values.get(0)))) {
        out.add(Matcher.of(e.name(), Matcher.Op.EQUAL, values.get(0)));
      } else if (!values.isEmpty()) {
        out.add(Matcher.of(e.name(), Matcher.Op.REGEX,
            values.stream().map(t -> globs ? globRegex(t) : quote(t)).collect(Collectors.joining("|"))));
      }
    }
    return out;
  }

  /** {@code source} and {@code target} (each a match mapping or matchers, both required) and {@code equal} (fields). */
  InhibitRule inhibitRule(YamlNode node, String where) {
    Map<String, Entry> keys = node.mapping(where, INHIBIT_KEYS).orElse(null);
    if (keys == null) {
      return null;
    }
    int before = node.file().problemCount();
    List<Matcher> source = null;
    List<Matcher> target = null;
    if (!keys.containsKey("source") || !keys.containsKey("target")) {
      node.problem(where + ": needs a source and a target (each matchers, or a match of severity, rule, role, agent)");
    } else {
      source = matchers(keys.get("source").value(), where + ": source");
      target = matchers(keys.get("target").value(), where + ": target");
    }
    List<String> equal = new ArrayList<>();
    if (keys.containsKey("equal")) {
      for (YamlNode f : strings(keys.get("equal").value(), where + ": equal")) {
        if (!Route.GROUP_FIELDS.contains(f.text())) {
          f.problem(where + ": equal: \"" + f.text() + "\" (one of " + fields() + ")");
        } else {
          equal.add(f.text());
        }
      }
    }
    return node.file().problemCount() > before ? null : new InhibitRule(source, target, List.copyOf(equal));
  }

  /** A match mapping, or matcher texts (one or a list). */
  private List<Matcher> matchers(YamlNode v, String where) {
    if (v.isMapping()) {
      return match(v, where);
    }
    List<Matcher> out = new ArrayList<>();
    for (YamlNode t : strings(v, where)) {
      try {
        out.add(Matcher.parse(t.text()));
      } catch (IllegalArgumentException e) {
        t.problem(where + ": " + e.getMessage());
      }
    }
    return out;
  }

  private static String fields() {
    return String.join(", ", new TreeSet<>(Route.GROUP_FIELDS));
  }

  /** A glob ({@code *} any run, {@code ?} one character) as a regex, every other character literal. */
  static String globRegex(String glob) {
    StringBuilder re = new StringBuilder();
    for (char c : glob.toCharArray()) {
      re.append(c == '*' ? ".*" : c == '?' ? "." : quote(String.valueOf(c)));
    }
    return re.toString();
  }

  /** {@code text} with each regex metacharacter escaped by a backslash. */
  static String quote(String text) {
    StringBuilder re = new StringBuilder();
    for (char c : text.toCharArray()) {
      if ("\\.[]{}()<>*+-=!?^$|".indexOf(c) >= 0) {
        re.append('\\');
      }
      re.append(c);
    }
    return re.toString();
  }

  private static boolean isGlob(String text) {
    return text.indexOf('*') >= 0 || text.indexOf('?') >= 0;
  }

  /** A mapping's value for {@code key}; null when the key is absent or its value is YAML's null. */
  static YamlNode value(YamlNode mapping, String key) {
    return mapping.entries("").stream().filter(e -> key.equals(e.name())).map(Entry::value)
        .filter(v -> !v.isNull()).findFirst().orElse(null);
  }

  static List<YamlNode> list(Entry entry, String what) {
    return entry == null || entry.value().isNull() ? List.of() : entry.value().list(what);
  }

  /** One string or a list of strings; a problem for each item that is not a string. */
  static List<YamlNode> strings(YamlNode v, String what) {
    if (v.isNull()) {
      return List.of();
    }
    List<YamlNode> out = new ArrayList<>();
    for (YamlNode item : v.oneOrMany(what)) {
      if (item.string(what) != null) {
        out.add(item);
      }
    }
    return out;
  }
}
