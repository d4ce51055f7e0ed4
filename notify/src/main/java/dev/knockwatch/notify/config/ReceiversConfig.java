package dev.knockwatch.notify.config;

import dev.knockwatch.events.ConfigException;
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
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.YAMLException;

/**
 * {@code receivers.yaml} in the alert-rules directory: the receivers, the routes, and the
 * console link ({@code publicUrl}). String values may use {@code ${VAR}} and
 * {@code ${VAR:-default}} from the environment; each secret also has a {@code *File} form
 * ({@code webhookUrlFile}, {@code botTokenFile}, {@code routingKeyFile}, {@code secretFile}) that
 * reads it from a file. Every problem is collected; none of them quotes a secret's value.
 * Without the file, every alert goes to the console.
 */
public record ReceiversConfig(List<Receiver> receivers, List<Route> routes, String publicUrl) {

  public static final String FILE = "receivers.yaml";
  public static final URI PAGERDUTY_EVENTS = URI.create("https://events.pagerduty.com/v2/enqueue");
  public static final String SLACK_API = "https://slack.com/api/";

  private static final Pattern VAR = Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?}");
  private static final Map<String, Set<String>> KEYS = Map.of(
      "slack", Set.of("name", "type", "webhookUrl", "webhookUrlFile", "botToken", "botTokenFile", "channel", "apiUrl",
          "minInterval"),
      "pagerduty", Set.of("name", "type", "routingKey", "routingKeyFile", "url"),
      "webhook", Set.of("name", "type", "url", "secret", "secretFile"),
      "console", Set.of("name", "type"));
  private static final Set<String> ROUTE_KEYS = Set.of("match", "receivers", "continue", "groupBy", "groupWait",
      "repeatInterval");
  private static final Set<String> MATCH_KEYS = Set.of("severity", "rule", "role", "agent");

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
    String text;
    try {
      text = Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new ConfigException(List.of(file + ": cannot read: " + e.getMessage()));
    }
    return new Reader(file, env).read(text);
  }

  public Receiver receiver(String name) {
    return receivers.stream().filter(r -> r.name().equals(name)).findFirst().orElseThrow();
  }

  /** The configuration with every secret masked: safe to print. */
  public String dump() {
    StringBuilder b = new StringBuilder("receivers:\n");
    receivers.forEach(r -> b.append("  - ").append(r).append('\n'));
    b.append("routes:\n");
    routes.forEach(r -> b.append("  - ").append(r).append('\n'));
    if (publicUrl != null) {
      b.append("publicUrl: ").append(publicUrl).append('\n');
    }
    return b.toString();
  }

  private static final class Reader {
    private final Path file;
    private final Map<String, String> env;
    private final List<String> problems = new ArrayList<>();

    Reader(Path file, Map<String, String> env) {
      this.file = file;
      this.env = env;
    }

    ReceiversConfig read(String text) {
      Object root;
      try {
        root = new Yaml(new SafeConstructor(new LoaderOptions())).load(text);
      } catch (YAMLException e) {
        throw new ConfigException(List.of(file + ": not valid YAML: " + e.getMessage().lines().findFirst().orElse("")));
      }
      if (!(root instanceof Map<?, ?> top)) {
        throw new ConfigException(List.of(file + ": expected a mapping with receivers and routes"));
      }
      for (Object key : top.keySet()) {
        if (!Set.of("receivers", "routes", "publicUrl").contains(String.valueOf(key))) {
          problem("unknown key \"" + key + "\" (known: receivers, routes, publicUrl)");
        }
      }
      List<Receiver> receivers = new ArrayList<>();
      Set<String> names = new LinkedHashSet<>();
      List<?> rs = list(top.get("receivers"), "receivers");
      for (int i = 0; i < rs.size(); i++) {
        Object node = rs.get(i);
        String name = node instanceof Map<?, ?> m && m.get("name") != null ? String.valueOf(m.get("name")) : null;
        if (name != null && names.contains(name)) {
          problem("receiver " + name + ": the name is used twice");
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
      List<?> ro = list(top.get("routes"), "routes");
      if (ro.isEmpty() && !receivers.isEmpty()) {
        problem("routes: none, so no alert would reach a receiver");
      }
      for (int i = 0; i < ro.size(); i++) {
        Route r = route(ro.get(i), "route " + (i + 1), names);
        if (r != null) {
          routes.add(r);
        }
      }
      String publicUrl = top.get("publicUrl") == null ? null : expand(String.valueOf(top.get("publicUrl")), "publicUrl");
      if (!problems.isEmpty()) {
        throw new ConfigException(problems);
      }
      return new ReceiversConfig(List.copyOf(receivers), List.copyOf(routes), publicUrl);
    }

    private Receiver receiver(Object node, String where) {
      if (!(node instanceof Map<?, ?> m)) {
        problem(where + ": expected a mapping with name and type");
        return null;
      }
      Object nameValue = m.get("name");
      if (nameValue == null || String.valueOf(nameValue).isBlank()) {
        problem(where + ": no name");
        return null;
      }
      String name = String.valueOf(nameValue);
      where = "receiver " + name;
      String type = m.get("type") == null ? null : String.valueOf(m.get("type"));
      if (type == null || !KEYS.containsKey(type)) {
        problem(where + ": type " + (type == null ? "missing" : "\"" + type + "\"")
            + " (one of slack, pagerduty, webhook, console)");
        return null;
      }
      for (Object key : m.keySet()) {
        if (!KEYS.get(type).contains(String.valueOf(key))) {
          problem(where + ": unknown key \"" + key + "\" for a " + type + " receiver");
        }
      }
      int before = problems.size();
      Receiver r = switch (type) {
        case "slack" -> {
          Secret webhook = secret(m, "webhookUrl", where);
          Secret token = secret(m, "botToken", where);
          String channel = string(m, "channel", where);
          if (problems.size() > before) {
            // a value that did not expand or read is already named; "give one of" would only repeat it
          } else if ((webhook == null) == (token == null)) {
            problem(where + ": give webhookUrl, or botToken and channel (one of the two)");
          } else if (token != null && channel == null) {
            problem(where + ": botToken needs a channel");
          }
          String api = m.containsKey("apiUrl") ? string(m, "apiUrl", where) : SLACK_API;
          Duration interval = m.containsKey("minInterval") ? duration(m.get("minInterval"), where + ": minInterval")
              : Duration.ofSeconds(1);
          yield new Receiver.Slack(name, webhook, token, channel, api != null && !api.endsWith("/") ? api + "/" : api,
              interval);
        }
        case "pagerduty" -> {
          Secret key = secret(m, "routingKey", where);
          if (key == null && problems.size() == before) {
            problem(where + ": routingKey (or routingKeyFile) is required");
          }
          URI url = m.containsKey("url") ? uri(string(m, "url", where), where + ": url") : PAGERDUTY_EVENTS;
          yield new Receiver.PagerDuty(name, key, url);
        }
        case "webhook" -> {
          String url = string(m, "url", where);
          if (url == null) {
            problem(where + ": url is required");
          }
          yield new Receiver.Webhook(name, url == null ? null : uri(url, where + ": url"), secret(m, "secret", where));
        }
        default -> new Receiver.Console(name);
      };
      return problems.size() > before ? null : r;
    }

    private Route route(Object node, String where, Set<String> receivers) {
      if (!(node instanceof Map<?, ?> m)) {
        problem(where + ": expected a mapping with match and receivers");
        return null;
      }
      for (Object key : m.keySet()) {
        if (!ROUTE_KEYS.contains(String.valueOf(key))) {
          problem(where + ": unknown key \"" + key + "\" (known: " + String.join(", ", ROUTE_KEYS.stream().sorted().toList()) + ")");
        }
      }
      int before = problems.size();
      Set<Alert.Severity> severities = EnumSet.noneOf(Alert.Severity.class);
      List<Glob> rules = new ArrayList<>();
      Set<String> roles = new LinkedHashSet<>();
      List<Glob> agents = new ArrayList<>();
      if (m.get("match") != null) {
        if (!(m.get("match") instanceof Map<?, ?> match)) {
          problem(where + ": match: expected a mapping of severity, rule, role, agent");
        } else {
          for (Map.Entry<?, ?> e : match.entrySet()) {
            String key = String.valueOf(e.getKey());
            if (!MATCH_KEYS.contains(key)) {
              problem(where + ": match: unknown key \"" + key + "\" (known: agent, role, rule, severity)");
              continue;
            }
            for (String v : strings(e.getValue())) {
              switch (key) {
                case "severity" -> {
                  try {
                    severities.add(Alert.Severity.valueOf(v.toUpperCase(Locale.ROOT)));
                  } catch (IllegalArgumentException ex) {
                    problem(where + ": match: severity \"" + v + "\" (one of info, warning, page, critical)");
                  }
                }
                case "rule" -> rules.add(Glob.of(v));
                case "role" -> roles.add(v);
                default -> agents.add(Glob.of(v));
              }
            }
          }
        }
      }
      List<String> to = strings(m.get("receivers"));
      if (to.isEmpty()) {
        problem(where + ": receivers: none given");
      }
      for (String r : to) {
        if (!receivers.contains(r)) {
          problem(where + ": receiver \"" + r + "\" is not defined");
        }
      }
      List<String> groupBy = strings(m.get("groupBy"));
      for (String g : groupBy) {
        if (!Route.GROUP_FIELDS.contains(g)) {
          problem(where + ": groupBy: \"" + g + "\" (one of agent, role, rule, severity)");
        }
      }
      Duration groupWait = m.containsKey("groupWait") ? duration(m.get("groupWait"), where + ": groupWait")
          : Route.DEFAULT_GROUP_WAIT;
      Duration repeat = m.containsKey("repeatInterval") ? duration(m.get("repeatInterval"), where + ": repeatInterval")
          : Route.DEFAULT_REPEAT_INTERVAL;
      Object cont = m.get("continue");
      if (cont != null && !(cont instanceof Boolean)) {
        problem(where + ": continue: expected true or false");
      }
      return problems.size() > before ? null : new Route(Set.copyOf(severities), List.copyOf(rules), Set.copyOf(roles),
          List.copyOf(agents), List.copyOf(to), Boolean.TRUE.equals(cont), List.copyOf(groupBy), groupWait, repeat);
    }

    /** {@code key} or {@code keyFile}, expanded; null when neither is given. */
    private Secret secret(Map<?, ?> m, String key, String where) {
      boolean inline = m.containsKey(key);
      boolean fromFile = m.containsKey(key + "File");
      if (inline && fromFile) {
        problem(where + ": give " + key + " or " + key + "File, not both");
        return null;
      }
      if (fromFile) {
        String path = string(m, key + "File", where);
        if (path == null) {
          return null;
        }
        try {
          String value = Files.readString(Path.of(path), StandardCharsets.UTF_8).strip();
          if (value.isEmpty()) {
            problem(where + ": " + key + "File " + path + " is empty");
            return null;
          }
          return new Secret(value);
        } catch (IOException e) {
          problem(where + ": " + key + "File " + path + " cannot be read (" + e.getClass().getSimpleName() + ")");
          return null;
        }
      }
      String value = inline ? string(m, key, where) : null;
      return value == null ? null : new Secret(value);
    }

    private String string(Map<?, ?> m, String key, String where) {
      Object v = m.get(key);
      if (v == null) {
        return null;
      }
      if (v instanceof Map || v instanceof List) {
        problem(where + ": " + key + ": expected a string");
        return null;
      }
      String expanded = expand(String.valueOf(v), where + ": " + key);
      if (expanded != null && expanded.isEmpty()) {
        problem(where + ": " + key + " is empty");
        return null;
      }
      return expanded;
    }

    /** ${VAR} and ${VAR:-default}; a problem (naming the variable, never its value) when VAR is unset. */
    private String expand(String text, String where) {
      Matcher v = VAR.matcher(text);
      StringBuilder out = new StringBuilder();
      boolean ok = true;
      while (v.find()) {
        String value = env.get(v.group(1));
        if (value == null || value.isEmpty()) {
          value = v.group(2);
        }
        if (value == null) {
          problem(where + ": ${" + v.group(1) + "} is not set");
          ok = false;
          value = "";
        }
        v.appendReplacement(out, Matcher.quoteReplacement(value));
      }
      v.appendTail(out);
      return ok ? out.toString() : null;
    }

    private URI uri(String text, String where) {
      if (text == null) {
        return null;
      }
      try {
        URI u = new URI(text);
        if (!"http".equals(u.getScheme()) && !"https".equals(u.getScheme()) || u.getHost() == null) {
          problem(where + ": not an http(s) URL");
          return null;
        }
        return u;
      } catch (URISyntaxException e) {
        problem(where + ": not a URL");
        return null;
      }
    }

    private Duration duration(Object v, String where) {
      Optional<Duration> d = Durations.parse(String.valueOf(v));
      if (d.isEmpty()) {
        problem(where + ": \"" + v + "\" is not a duration (e.g. 30s, 5m, 4h)");
      }
      return d.orElse(Duration.ZERO);
    }

    private List<?> list(Object v, String where) {
      if (v == null) {
        return List.of();
      }
      if (!(v instanceof List<?> l)) {
        problem(where + ": expected a list");
        return List.of();
      }
      return l;
    }

    private static List<String> strings(Object v) {
      if (v == null) {
        return List.of();
      }
      if (v instanceof List<?> l) {
        return l.stream().map(String::valueOf).toList();
      }
      return List.of(String.valueOf(v));
    }

    private void problem(String p) {
      problems.add(file + ": " + p);
    }
  }

  /** Names of receivers in the order routes would list them: for the start-up banner. */
  public Map<String, String> summary() {
    Map<String, String> out = new LinkedHashMap<>();
    receivers.forEach(r -> out.put(r.name(), r.getClass().getSimpleName().toLowerCase(Locale.ROOT)));
    return out;
  }
}
