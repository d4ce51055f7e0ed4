package dev.knockwatch.notify.config;

import dev.knockwatch.events.config.YamlFile;
import dev.knockwatch.events.config.YamlNode;
import dev.knockwatch.events.config.YamlNode.Entry;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Durations;
import dev.knockwatch.events.Glob;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code receivers.yaml} in the alert-rules directory: the receivers, the routes, and the
 * console link ({@code publicUrl}). String values may use {@code ${VAR}} and
 * {@code ${VAR:-default}} from the environment; each secret also has a {@code *File} form
 * ({@code webhookUrlFile}, {@code botTokenFile}, {@code routingKeyFile}, {@code secretFile}) that
 * reads it from a file. Every problem is collected; none of them quotes a secret's value.
 * Without the file, every alert goes to the console.
 */
public record ReceiversConfig(List<Receiver> receivers, List<Route> routes, String publicUrl,
    List<InhibitRule> inhibitRules) {

  public ReceiversConfig(List<Receiver> receivers, List<Route> routes, String publicUrl) {
    this(receivers, routes, publicUrl, List.of());
  }

  public static final String FILE = "receivers.yaml";
  public static final URI PAGERDUTY_EVENTS = URI.create("https://events.pagerduty.com/v2/enqueue");
  public static final String SLACK_API = "https://slack.com/api/";

  private static final Pattern VAR = Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?}");
  private static final Map<String, Set<String>> KEYS = Map.of(
      "slack", Set.of("name", "type", "webhookUrl", "webhookUrlFile", "botToken", "botTokenFile", "channel", "apiUrl",
          "minInterval"),
      "pagerduty", Set.of("name", "type", "routingKey", "routingKeyFile", "url"),
      "webhook", Set.of("name", "type", "url", "secret", "secretFile", "format"),
      "alertmanager", Set.of("name", "type", "url"),
      "console", Set.of("name", "type"));
  private static final Set<String> ROUTE_KEYS = Set.of("match", "receivers", "continue", "groupBy", "groupWait",
      "repeatInterval");
  private static final Set<String> MATCH_KEYS = Set.of("severity", "rule", "role", "agent");
  private static final Set<String> INHIBIT_KEYS = Set.of("source", "target", "equal");

  /** Every alert to one console receiver: what {@code up} does without receivers.yaml. */
  public static ReceiversConfig consoleOnly() {
    return new ReceiversConfig(List.of(new Receiver.Console("console")), List.of(new Route(Set.of(), List.of(),
        Set.of(), List.of(), List.of("console"), false, List.of(), Route.DEFAULT_GROUP_WAIT,
        Route.DEFAULT_REPEAT_INTERVAL)), null);
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
    receivers.forEach(r -> b.append("  ").append(r.name()).append(": ").append(describe(r)).append('\n'));
    b.append("routes (first match wins unless it continues):\n");
    routes.forEach(r -> b.append("  - ").append(r.describe()).append('\n'));
    if (!inhibitRules.isEmpty()) {
      b.append("inhibitRules (while a source fires, its targets are not notified):\n");
      inhibitRules.forEach(r -> b.append("  - ").append(r.describe()).append('\n'));
    }
    if (publicUrl != null) {
      b.append("publicUrl: ").append(publicUrl).append('\n');
    }
    return b.toString();
  }

  private static String describe(Receiver r) {
    if (r instanceof Receiver.Slack s) {
      return "slack " + (s.webhookUrl() != null ? "webhook " + s.webhookUrl()
          : "bot token " + s.botToken() + " to " + s.channel() + " via " + s.apiUrl())
          + ", one message every " + Durations.format(s.minInterval()) + " at most";
    }
    if (r instanceof Receiver.PagerDuty p) {
      return "pagerduty " + p.url() + ", routing key " + p.routingKey();
    }
    if (r instanceof Receiver.Webhook w) {
      return "webhook " + w.url() + (w.alertmanager() ? " (Alertmanager's webhook format)" : "")
          + (w.secret() == null ? ", unsigned" : ", signed with " + w.secret());
    }
    if (r instanceof Receiver.Alertmanager a) {
      return "alertmanager " + a.alerts();
    }
    return "console";
  }

  /** One pass over the file's nodes: every problem is a problem of its {@link YamlFile}, at its line. */
  private static final class Reader {
    private final Map<String, String> env;
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
      Map<String, Entry> top = root.mapping(null, Set.of("receivers", "routes", "publicUrl", "inhibitRules")).orElseThrow();
      List<Receiver> receivers = new ArrayList<>();
      Set<String> names = new LinkedHashSet<>();
      List<YamlNode> rs = list(top.get("receivers"), "receivers");
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
      List<Route> routes = new ArrayList<>();
      List<YamlNode> ro = list(top.get("routes"), "routes");
      if (ro.isEmpty() && !receivers.isEmpty()) {
        (top.containsKey("routes") ? top.get("routes").key() : root).problem("routes: none, so no alert would reach a receiver");
      }
      for (int i = 0; i < ro.size(); i++) {
        Route r = route(ro.get(i), "route " + (i + 1), names);
        if (r != null) {
          routes.add(r);
        }
      }
      String publicUrl = top.containsKey("publicUrl") ? string(top.get("publicUrl").value(), "publicUrl") : null;
      List<InhibitRule> inhibitRules = new ArrayList<>();
      List<YamlNode> ir = list(top.get("inhibitRules"), "inhibitRules");
      for (int i = 0; i < ir.size(); i++) {
        InhibitRule r = inhibitRule(ir.get(i), "inhibit rule " + (i + 1));
        if (r != null) {
          inhibitRules.add(r);
        }
      }
      return file.problemCount() > 0 ? null
          : new ReceiversConfig(List.copyOf(receivers), List.copyOf(routes), publicUrl, List.copyOf(inhibitRules));
    }

    private Receiver receiver(YamlNode node, String where) {
      if (!node.isMapping()) {
        node.problem(where + ": expected a mapping with name and type");
        return null;
      }
      Map<String, Entry> m = new LinkedHashMap<>();
      node.entries(where).forEach(e -> m.put(e.name(), e));
      YamlNode nameNode = value(node, "name");
      if (nameNode == null || nameNode.text() == null || nameNode.text().isBlank()) {
        node.problem(where + ": no name");
        return null;
      }
      String name = nameNode.text();
      where = "receiver " + name;
      YamlNode typeNode = value(node, "type");
      String type = typeNode == null ? null : typeNode.text();
      if (type == null || !KEYS.containsKey(type)) {
        (typeNode == null ? node : typeNode).problem(where + ": type " + (type == null ? "missing" : "\"" + type + "\"")
            + " (one of slack, pagerduty, webhook, alertmanager, console)");
        return null;
      }
      for (Entry e : m.values()) {
        if (!KEYS.get(type).contains(e.name())) {
          e.key().problem(where + ": unknown key \"" + e.name() + "\" for a " + type + " receiver");
        }
      }
      int before = file.problemCount();
      Receiver r = switch (type) {
        case "slack" -> {
          Secret webhook = secret(node, "webhookUrl", where);
          Secret token = secret(node, "botToken", where);
          String channel = string(node, "channel", where);
          if (file.problemCount() > before) {
            // a value that did not expand or read is already named; "give one of" would only repeat it
          } else if ((webhook == null) == (token == null)) {
            node.problem(where + ": give webhookUrl, or botToken and channel (one of the two)");
          } else if (token != null && channel == null) {
            node.problem(where + ": botToken needs a channel");
          }
          String api = m.containsKey("apiUrl") ? string(node, "apiUrl", where) : SLACK_API;
          Duration interval = m.containsKey("minInterval")
              ? m.get("minInterval").value().duration(where + ": minInterval").orElse(Duration.ZERO)
              : Duration.ofSeconds(1);
          yield new Receiver.Slack(name, webhook, token, channel, api != null && !api.endsWith("/") ? api + "/" : api,
              interval);
        }
        case "pagerduty" -> {
          Secret key = secret(node, "routingKey", where);
          if (key == null && file.problemCount() == before) {
            node.problem(where + ": routingKey (or routingKeyFile) is required");
          }
          URI url = m.containsKey("url") ? uri(node, "url", where) : PAGERDUTY_EVENTS;
          yield new Receiver.PagerDuty(name, key, url);
        }
        case "webhook" -> {
          URI url = null;
          if (value(node, "url") == null) {
            node.problem(where + ": url is required");
          } else {
            url = uri(node, "url", where);
          }
          YamlNode format = value(node, "format");
          String f = format == null ? "knockwatch" : string(format, where + ": format");
          if (f != null && !f.equals("knockwatch") && !f.equals("alertmanager")) {
            format.problem(where + ": format \"" + f + "\" (one of knockwatch, alertmanager)");
          }
          yield new Receiver.Webhook(name, url, secret(node, "secret", where), "alertmanager".equals(f));
        }
        case "alertmanager" -> {
          URI url = null;
          if (value(node, "url") == null) {
            node.problem(where + ": url is required (the Alertmanager, e.g. http://alertmanager:9093)");
          } else {
            url = uri(node, "url", where);
          }
          yield new Receiver.Alertmanager(name, url);
        }
        default -> new Receiver.Console(name);
      };
      return file.problemCount() > before ? null : r;
    }

    private Route route(YamlNode node, String where, Set<String> receivers) {
      if (!node.isMapping()) {
        node.problem(where + ": expected a mapping with match and receivers");
        return null;
      }
      Map<String, Entry> m = node.mapping(where, ROUTE_KEYS).orElseThrow();
      int before = file.problemCount();
      YamlNode matchNode = value(node, "match");
      AlertMatch match = matchNode == null ? AlertMatch.ANY : match(matchNode, where + ": match");
      List<String> to = new ArrayList<>();
      YamlNode toNode = value(node, "receivers");
      for (YamlNode r : toNode == null ? List.<YamlNode>of() : strings(toNode, where + ": receivers")) {
        to.add(r.text());
        if (!receivers.contains(r.text())) {
          r.problem(where + ": receiver \"" + r.text() + "\" is not defined");
        }
      }
      if (to.isEmpty()) {
        (toNode == null ? node : toNode).problem(where + ": receivers: none given");
      }
      List<String> groupBy = new ArrayList<>();
      YamlNode groupNode = value(node, "groupBy");
      for (YamlNode g : groupNode == null ? List.<YamlNode>of() : strings(groupNode, where + ": groupBy")) {
        groupBy.add(g.text());
        if (!Route.GROUP_FIELDS.contains(g.text())) {
          g.problem(where + ": groupBy: \"" + g.text() + "\" (one of " + String.join(", ", new TreeSet<>(Route.GROUP_FIELDS)) + ")");
        }
      }
      Duration groupWait = m.containsKey("groupWait")
          ? m.get("groupWait").value().duration(where + ": groupWait").orElse(Duration.ZERO) : Route.DEFAULT_GROUP_WAIT;
      Duration repeat = m.containsKey("repeatInterval")
          ? m.get("repeatInterval").value().duration(where + ": repeatInterval").orElse(Duration.ZERO)
          : Route.DEFAULT_REPEAT_INTERVAL;
      YamlNode contNode = value(node, "continue");
      boolean cont = false;
      if (contNode != null) {
        Optional<Boolean> b = contNode.bool();
        if (b.isEmpty()) {
          contNode.problem(where + ": continue: expected true or false");
        }
        cont = b.orElse(false);
      }
      return file.problemCount() > before ? null : new Route(match.severities(), match.rules(), match.roles(),
          match.agents(), List.copyOf(to), cont, List.copyOf(groupBy), groupWait, repeat);
    }

    /** {@code severity}, {@code rule} (globs), {@code role}, {@code agent} (globs), each one value or a list. */
    private AlertMatch match(YamlNode matchNode, String where) {
      Set<Alert.Severity> severities = EnumSet.noneOf(Alert.Severity.class);
      List<Glob> rules = new ArrayList<>();
      Set<String> roles = new LinkedHashSet<>();
      List<Glob> agents = new ArrayList<>();
      if (!matchNode.isMapping()) {
        matchNode.problem(where + ": expected a mapping of severity, rule, role, agent");
        return AlertMatch.ANY;
      }
      for (Entry e : matchNode.entries(where)) {
        if (!MATCH_KEYS.contains(e.name())) {
          e.key().problem(where + ": unknown key \"" + e.name() + "\" (known: agent, role, rule, severity)");
          continue;
        }
        for (YamlNode v : strings(e.value(), where + ": " + e.name())) {
          String text = v.text();
          switch (e.name()) {
            case "severity" -> {
              try {
                severities.add(Alert.Severity.valueOf(text.toUpperCase(Locale.ROOT)));
              } catch (IllegalArgumentException ex) {
                v.problem(where + ": severity \"" + text + "\" (one of info, warning, page, critical)");
              }
            }
            case "rule" -> rules.add(Glob.of(text));
            case "role" -> roles.add(text);
            default -> agents.add(Glob.of(text));
          }
        }
      }
      return new AlertMatch(Set.copyOf(severities), List.copyOf(rules), Set.copyOf(roles), List.copyOf(agents));
    }

    /** {@code source} and {@code target} (matches, both required) and {@code equal} (fields). */
    private InhibitRule inhibitRule(YamlNode node, String where) {
      Map<String, Entry> keys = node.mapping(where, INHIBIT_KEYS).orElse(null);
      if (keys == null) {
        return null;
      }
      int before = file.problemCount();
      AlertMatch source = null;
      AlertMatch target = null;
      if (!keys.containsKey("source") || !keys.containsKey("target")) {
        node.problem(where + ": needs a source and a target (each a match: severity, rule, role, agent)");
      } else {
        source = match(keys.get("source").value(), where + ": source");
        target = match(keys.get("target").value(), where + ": target");
      }
      List<String> equal = new ArrayList<>();
      if (keys.containsKey("equal")) {
        for (YamlNode f : strings(keys.get("equal").value(), where + ": equal")) {
          if (!Route.GROUP_FIELDS.contains(f.text())) {
            f.problem(where + ": equal: \"" + f.text() + "\" (one of " + String.join(", ", new TreeSet<>(Route.GROUP_FIELDS)) + ")");
          } else {
            equal.add(f.text());
          }
        }
      }
      return file.problemCount() > before ? null : new InhibitRule(source, target, List.copyOf(equal));
    }

    /** {@code key} or {@code keyFile}, expanded; null when neither is given. */
    private Secret secret(YamlNode m, String key, String where) {
      YamlNode inline = value(m, key);
      YamlNode fromFile = value(m, key + "File");
      if (inline != null && fromFile != null) {
        fromFile.problem(where + ": give " + key + " or " + key + "File, not both");
        return null;
      }
      if (fromFile != null) {
        String path = string(m, key + "File", where);
        if (path == null) {
          return null;
        }
        try {
          String value = Files.readString(Path.of(path), StandardCharsets.UTF_8).strip();
          if (value.isEmpty()) {
            fromFile.problem(where + ": " + key + "File " + path + " is empty");
            return null;
          }
          return new Secret(value);
        } catch (IOException e) {
          fromFile.problem(where + ": " + key + "File " + path + " cannot be read (" + e.getClass().getSimpleName() + ")");
          return null;
        }
      }
      String value = inline != null ? string(m, key, where) : null;
      return value == null ? null : new Secret(value);
    }

    /** {@code key}'s string, expanded; null (after a problem, if it is not a non-empty string) when absent. */
    private String string(YamlNode m, String key, String where) {
      YamlNode v = value(m, key);
      return v == null ? null : string(v, where + ": " + key);
    }

    private String string(YamlNode v, String what) {
      String text = v.string(what);
      if (text == null) {
        return null;
      }
      String expanded = expand(v, text, what);
      if (expanded != null && expanded.isEmpty()) {
        v.problem(what + " is empty");
        return null;
      }
      return expanded;
    }

    /** ${VAR} and ${VAR:-default}; a problem (naming the variable, never its value) when VAR is unset. */
    private String expand(YamlNode at, String text, String where) {
      Matcher v = VAR.matcher(text);
      StringBuilder out = new StringBuilder();
      boolean ok = true;
      while (v.find()) {
        String value = env.get(v.group(1));
        if (value == null || value.isEmpty()) {
          value = v.group(2);
        }
        if (value == null) {
          at.problem(where + ": ${" + v.group(1) + "} is not set");
          ok = false;
          value = "";
        }
        v.appendReplacement(out, Matcher.quoteReplacement(value));
      }
      v.appendTail(out);
      return ok ? out.toString() : null;
    }

    private URI uri(YamlNode m, String key, String where) {
      String text = string(m, key, where);
      if (text == null) {
        return null;
      }
      try {
        URI u = new URI(text);
        if (!"http".equals(u.getScheme()) && !"https".equals(u.getScheme()) || u.getHost() == null) {
          value(m, key).problem(where + ": " + key + ": not an http(s) URL");
          return null;
        }
        return u;
      } catch (URISyntaxException e) {
        value(m, key).problem(where + ": " + key + ": not a URL");
        return null;
      }
    }

    /** A mapping's value for {@code key}; null when the key is absent or its value is YAML's null. */
    private static YamlNode value(YamlNode mapping, String key) {
      return mapping.entries("").stream().filter(e -> key.equals(e.name())).map(Entry::value)
          .filter(v -> !v.isNull()).findFirst().orElse(null);
    }

    private static List<YamlNode> list(Entry entry, String what) {
      return entry == null || entry.value().isNull() ? List.of() : entry.value().list(what);
    }

    /** One string or a list of strings; a problem for each item that is not a string. */
    private static List<YamlNode> strings(YamlNode v, String what) {
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

  /** Names of receivers in the order routes would list them: for the start-up banner. */
  public Map<String, String> summary() {
    Map<String, String> out = new LinkedHashMap<>();
    receivers.forEach(r -> out.put(r.name(), r.getClass().getSimpleName().toLowerCase(Locale.ROOT)));
    return out;
  }
}
