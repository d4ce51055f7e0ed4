package dev.knockwatch.notify.config;

import static dev.knockwatch.notify.config.RouteReader.value;

import dev.knockwatch.events.config.YamlFile;
import dev.knockwatch.events.config.YamlNode;
import dev.knockwatch.events.config.YamlNode.Entry;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Durations;
import dev.knockwatch.events.Glob;
import dev.knockwatch.notify.spi.Secret;
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
 * {@code receivers.yaml} in the alert-rules directory: the receivers, the route tree (or the
 * flat list of routes it replaced, read as the children of a root with no receiver), the inhibit
 * rules, and the console link ({@code publicUrl}). String values may use {@code ${VAR}} and
 * {@code ${VAR:-default}} from the environment; each secret also has a {@code *File} form
 * ({@code webhookUrlFile}, {@code botTokenFile}, {@code routingKeyFile}, {@code secretFile}) that
 * reads it from a file. Every problem is collected; none of them quotes a secret's value.
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
  public static final URI PAGERDUTY_EVENTS = URI.create("https://events.pagerduty.com/v2/enqueue");
  public static final String SLACK_API = "https://slack.com/api/";

  private static final Pattern VAR = Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?}");
  private static final Map<String, Set<String>> KEYS = Map.of(
      "slack", Set.of("name", "type", "webhookUrl", "webhookUrlFile", "botToken", "botTokenFile", "channel", "apiUrl",
          "minInterval", "maxPerMinute"),
      "pagerduty", Set.of("name", "type", "routingKey", "routingKeyFile", "url", "maxPerMinute"),
      "webhook", Set.of("name", "type", "url", "secret", "secretFile", "format", "maxPerMinute"),
      "alertmanager", Set.of("name", "type", "url", "maxPerMinute"),
      "console", Set.of("name", "type"));
  /** Past this many notifications in a minute, a receiver's next ones are folded into one digest a minute. */
  public static final int DEFAULT_MAX_PER_MINUTE = 60;

  /** Every alert to one console receiver: what {@code up} does without receivers.yaml. */
  public static ReceiversConfig consoleOnly() {
    return new ReceiversConfig(List.of(new Receiver.Console("console")), Route.leaf(List.of(), List.of("console")), null);
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
    return maxPerMinute.getOrDefault(receiver, receiver(receiver) instanceof Receiver.Console ? 0 : DEFAULT_MAX_PER_MINUTE);
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
      String publicUrl = top.containsKey("publicUrl") ? string(top.get("publicUrl").value(), "publicUrl") : null;
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
      YamlNode cap = value(node, "maxPerMinute");
      if (cap != null) {
        String text = cap.text();
        if (text == null || !text.matches("[0-9]{1,5}") || Integer.parseInt(text) < 1) {
          cap.problem(where + ": maxPerMinute: expected a whole number from 1 to 99999");
        } else {
          maxPerMinute.put(name, Integer.parseInt(text));
        }
      }
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
  }

  /** Names of receivers in the order routes would list them: for the start-up banner. */
  public Map<String, String> summary() {
    Map<String, String> out = new LinkedHashMap<>();
    receivers.forEach(r -> out.put(r.name(), r.getClass().getSimpleName().toLowerCase(Locale.ROOT)));
    return out;
  }
}
