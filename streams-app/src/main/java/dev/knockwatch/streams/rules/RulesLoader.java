package dev.knockwatch.streams.rules;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.knockwatch.events.Alert.Severity;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.error.MarkedYAMLException;

/**
 * Reads the {@code count} rules of {@code <dir>/rules.yaml}. Rules of other detectors are left
 * for the detectors that own them; every count rule is validated here, and a problem is reported
 * with the file and the rule it is in.
 */
public final class RulesLoader {

  public static final String RULES_FILE = "rules.yaml";
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final Pattern DURATION = Pattern.compile("(\\d+)(ms|s|m|h|d)");
  private static final Pattern RULE_ID = Pattern.compile("[a-z0-9][a-z0-9-]{0,62}");

  private RulesLoader() {}

  public static List<CountRule> countRules(Path dir) {
    Path file = dir.resolve(RULES_FILE);
    if (!Files.isRegularFile(file)) {
      throw new RulesException(file + ": not found (the rules directory must hold " + RULES_FILE + ")");
    }
    JsonNode root;
    try {
      root = YAML.readTree(file.toFile());
    } catch (JsonProcessingException e) {
      throw new RulesException(yamlProblem(file, e));
    } catch (IOException e) {
      throw new RulesException(file + ": cannot read: " + e.getMessage());
    }
    JsonNode rules = root == null ? null : root.get("rules");
    if (rules == null || !rules.isArray()) {
      throw new RulesException(file + ": needs a top-level \"rules:\" list");
    }
    List<CountRule> out = new ArrayList<>();
    Set<String> ids = new HashSet<>();
    int index = 0;
    for (JsonNode rule : rules) {
      index++;
      String where = file + ": rule " + index;
      String id = rule.path("id").asText("");
      if (!RULE_ID.matcher(id).matches()) {
        throw new RulesException(where + ": id \"" + id + "\" must be 1-63 of [a-z0-9-], starting with a letter or digit");
      }
      where = file + ": rule " + id;
      if (!ids.add(id)) {
        throw new RulesException(where + ": duplicate id");
      }
      if (!"count".equals(rule.path("detector").asText())) {
        continue;
      }
      Duration window = rule.has("window") ? duration(where, "window", rule.get("window").asText())
          : CountRule.DEFAULT_WINDOW;
      Duration grace = rule.has("grace") ? duration(where, "grace", rule.get("grace").asText())
          : CountRule.DEFAULT_GRACE;
      JsonNode t = rule.get("threshold");
      if (t == null || !t.canConvertToInt() || !t.isIntegralNumber() || t.asInt() < 1) {
        throw new RulesException(where + ": threshold must be a whole number of at least 1, not "
            + (t == null ? "missing" : "\"" + t.asText() + "\""));
      }
      out.add(new CountRule(id, window, t.asInt(), severity(where, rule.path("severity").asText("warning")), grace));
    }
    return out;
  }

  /** One line: the file, the line of the problem, and snakeyaml's own words for it. */
  private static String yamlProblem(Path file, JsonProcessingException e) {
    if (e.getCause() instanceof MarkedYAMLException m && m.getProblemMark() != null) {
      return file + ":" + (m.getProblemMark().getLine() + 1) + ": not valid YAML: "
          + (m.getContext() == null ? "" : m.getContext() + ": ") + m.getProblem();
    }
    JsonLocation at = e.getLocation();
    return file + (at == null ? "" : ":" + at.getLineNr()) + ": not valid YAML: "
        + e.getOriginalMessage().lines().findFirst().orElse("");
  }

  /** {@code 30s}, {@code 5m}, {@code 1h}, {@code 250ms}, {@code 1d}. */
  public static Duration duration(String where, String key, String text) {
    Matcher m = DURATION.matcher(text.strip());
    if (!m.matches()) {
      throw new RulesException(where + ": " + key + " \"" + text + "\" is not a duration (like 30s, 5m, 1h)");
    }
    long n = Long.parseLong(m.group(1));
    Duration d = switch (m.group(2)) {
      case "ms" -> Duration.ofMillis(n);
      case "s" -> Duration.ofSeconds(n);
      case "m" -> Duration.ofMinutes(n);
      case "h" -> Duration.ofHours(n);
      default -> Duration.ofDays(n);
    };
    if (d.isZero() && !key.equals("grace")) {
      throw new RulesException(where + ": " + key + " must be longer than zero");
    }
    return d;
  }

  private static Severity severity(String where, String text) {
    try {
      return Severity.valueOf(text.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new RulesException(where + ": severity \"" + text + "\" is not one of info, warning, page, critical");
    }
  }
}
