package dev.knockwatch.streams.rules;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Alert.Severity;
import dev.knockwatch.events.EventSource;
import dev.knockwatch.events.EventSources;
import dev.knockwatch.events.Glob;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.config.Key;
import dev.knockwatch.events.config.KeyValues;
import dev.knockwatch.events.config.YamlNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The keys every rule of rules.yaml takes, whatever its detector, declared once as a detector
 * declares its own ({@link Detector.Spec#keys}): {@link PolicyLoader} reads a rule by them and
 * README's rules reference lists them. {@code match} and {@code except} each hold a mapping of
 * {@link #MATCH_KEYS}.
 */
final class RuleKeys {

  private static final Pattern RULE_ID = Pattern.compile("[a-z0-9][a-z0-9-]{0,62}");
  private static final Pattern LOOKS_LIKE_ATTACK = Pattern.compile("(?i)(?:attack\\.t|t)\\d.*");
  private static final Pattern LABEL_NAME = Pattern.compile("[a-zA-Z_][a-zA-Z0-9_]{0,62}");
  private static final String ID_RULE = "must be 1-63 of [a-z0-9-], starting with a letter or digit";
  private static final String DETECTORS = String.join(", ", Detectors.ALL.stream().map(d -> d.spec().name()).toList());
  private static final String SEVERITIES = String.join(", ", Arrays.stream(Severity.values()).map(RuleKeys::wire).toList());

  static final Key<String> ID = Key.of("id", "1-63 of a-z, 0-9 and -", null, "required",
      "the rule's name in its alerts, silences and routes; one rule of a name across the rules files; not "
          + "\"by-grain\" nor ending in \"-by-grain\" (detection's names for a rule's counts at its grain)",
      (node, where) -> {
        String id = node.text();
        if (id == null || !RULE_ID.matcher(id).matches()) {
          node.problem(where + ": id \"" + (id == null ? "" : id) + "\" " + ID_RULE);
          return null;
        }
        if (id.equals(Rule.GRAIN_SUFFIX.substring(1)) || id.endsWith(Rule.GRAIN_SUFFIX)) {
          // detection names a rule's copy at its task, session or agent grain "<id>-by-grain" (its
          // processor and store), so "retry-by-grain" beside a "retry" per task would be one name twice
          node.problem(where + ": id \"" + id + "\" is kept: detection names a rule's counts at its grain \"<id>"
              + Rule.GRAIN_SUFFIX + "\" (\"by-grain\" too)");
          return null;
        }
        return id;
      }).requiredAs("\"\" " + ID_RULE);
  static final Key<Detector<?>> DETECTOR = Key.<Detector<?>>oneOf("detector", Detectors.ALL, d -> d.spec().name(), null,
      "what the rule pages on: one of the detectors below, with its own keys").requiredAs("is missing (one of "
      + DETECTORS + ")");
  static final Key<Severity> SEVERITY = Key.of("severity", "one of " + SEVERITIES, Severity.WARNING,
      wire(Severity.WARNING), "its alerts' severity", (node, where) -> {
        String s = node.text();
        try {
          return Severity.valueOf(String.valueOf(s).toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
          node.problem(where + ": severity \"" + s + "\" is not one of " + SEVERITIES);
          return null;
        }
      });
  /** Whether the rule only writes its alerts (true: shadow) or also pages (false: enforce). */
  static final Key<Boolean> MODE = Key.of("mode", "enforce or shadow", false, "enforce",
      "shadow: its alerts are written, marked shadow, and page no one", (node, where) -> {
        String mode = node.text();
        if (!"shadow".equals(mode) && !"enforce".equals(mode)) {
          node.problem(where + ": mode \"" + mode + "\" is not enforce or shadow");
          return null;
        }
        return "shadow".equals(mode);
      });
  static final Key<Duration> RESOLVE_AFTER = Key.duration("resolveAfter", Rule.DEFAULT_RESOLVE_AFTER, false,
      "how long without a hit before its alert resolves");
  static final Key<KeyValues> MATCH = matchKey("match", "every refusal",
      "which refusals the rule reads: each key given must match (a list: any of its items)");
  static final Key<KeyValues> EXCEPT = matchKey("except", "none",
      "refusals taken back out of match, by the same keys (`{role: guard-probe}`: the guard probes' expected refusals)");
  static final Key<String> DESCRIPTION = Key.of("description", "text", null, "none", "what the rule is for, to its readers",
      (node, where) -> node.text());
  static final Key<List<String>> TAGS = Key.of("tags", "a tag or a list of tags", List.of(), "none",
      "carried into its alerts: 1 to 64 characters each; an ATT&CK technique as attack.t1046, T1046 or T1046.001",
      RuleKeys::tags);
  static final Key<String> RUNBOOK = Key.of("runbook", "http(s) URL", null, "none", "the runbook its alerts link to",
      (node, where) -> {
        String runbook = node.string(where + ": runbook");
        if (runbook != null && !runbook.matches("https?://[^\\s]+")) {
          node.problem(where + ": runbook \"" + runbook + "\" is not an http(s) URL");
          return null;
        }
        return runbook;
      });
  static final Key<Map<String, String>> LABELS = Key.of("labels", "mapping of label name to text", Map.of(), "none",
      "carried into its alerts, for routes, silences and Alertmanager",
      (node, where) -> stringMap(where, "labels", node, true));
  static final Key<Map<String, String>> ANNOTATIONS = Key.of("annotations", "mapping of name to text", Map.of(), "none",
      "carried into its alerts' payloads", (node, where) -> stringMap(where, "annotations", node, false));
  static final Key<Boolean> ENABLED = Key.bool("enabled", true, "false: the rule is checked, then left out");

  /** Every rule's keys, in the order the reference lists them. */
  static final List<Key<?>> ALL = List.of(ID, DETECTOR, SEVERITY, MODE, RESOLVE_AFTER, MATCH, EXCEPT, DESCRIPTION, TAGS,
      RUNBOOK, LABELS, ANNOTATIONS, ENABLED);

  // the keys of match and except: each is read with WHERE naming its holder ("rule retry: match")

  static final Key<Set<String>> SOURCE = Key.of("source", "a source's name or a list", Set.of(), "any",
      "the format ingest read the refusal in (srt-violation, squid, ...)", (node, where) -> {
        Set<String> out = new LinkedHashSet<>();
        for (YamlNode n : node.oneOrMany(where + ".source")) {
          String s = EventSources.named(n.text()).map(EventSource::wireName).orElse(null);
          if (s == null) {
            n.problem(where + ".source \"" + n.text() + "\" is not one of " + EventSources.names());
          } else {
            out.add(s);
          }
        }
        return Set.copyOf(out);
      });
  static final Key<Set<Kind>> KIND = Key.of("kind", "one or a list of " + String.join(", ",
      Arrays.stream(Kind.values()).map(RuleKeys::wire).toList()), Set.of(), "any", "what was refused", (node, where) -> {
        Set<Kind> out = new LinkedHashSet<>();
        for (YamlNode n : node.oneOrMany(where + ".kind")) {
          Kind k = Arrays.stream(Kind.values()).filter(v -> wire(v).equals(n.text())).findFirst().orElse(null);
          if (k == null) {
            n.problem(where + ".kind \"" + n.text() + "\" is not one of "
                + String.join(", ", Arrays.stream(Kind.values()).map(RuleKeys::wire).toList()));
          } else {
            out.add(k);
          }
        }
        return Set.copyOf(out);
      });
  /** Each role named must be defined in roles.yaml: {@link PolicyLoader} checks them against it. */
  static final Key<Set<String>> ROLE = Key.of("role", "a role of roles.yaml or a list", Set.of(), "any",
      "the refused agent's role", (node, where) -> {
        Set<String> out = new LinkedHashSet<>();
        for (YamlNode n : node.oneOrMany(where + ".role")) {
          String r = n.string(where + ".role");
          if (r != null) {
            out.add(r);
          }
        }
        return Set.copyOf(out);
      });
  static final Key<Glob> AGENT = glob("agent", "the refused agent's id");
  static final Key<Glob> HOST = glob("host", "the refused host");

  static final List<Key<?>> MATCH_KEYS = List.of(SOURCE, KIND, ROLE, AGENT, HOST);

  private RuleKeys() {}

  /** The refusals that {@code m} (the values of {@code match} or {@code except}) selects. */
  static RuleMatch match(KeyValues m) {
    return new RuleMatch(m.get(SOURCE), m.get(KIND), m.get(ROLE), m.get(AGENT), m.get(HOST), null);
  }

  /** What the rule says of itself, carried into its alerts; null when it says nothing. */
  static Alert.Meta meta(KeyValues v) {
    if (v.get(TAGS).isEmpty() && v.get(RUNBOOK) == null && v.get(LABELS).isEmpty() && v.get(ANNOTATIONS).isEmpty()) {
      return null;
    }
    return new Alert.Meta(v.get(TAGS), v.get(RUNBOOK), v.get(LABELS), v.get(ANNOTATIONS));
  }

  private static Key<KeyValues> matchKey(String name, String defaultText, String doc) {
    return Key.of(name, "mapping of source, kind, role, agent, host", null, defaultText, doc,
        (node, where) -> KeyValues.of(node, where + ": " + name, MATCH_KEYS).orElse(null));
  }

  private static Key<Glob> glob(String name, String doc) {
    return Key.of(name, "glob of `*` and `?`", null, "any", doc, (node, where) -> {
      String text = node.string(where + "." + name);
      return text == null ? null : Glob.of(text);
    });
  }

  private static List<String> tags(YamlNode node, String where) {
    List<String> tags = new ArrayList<>();
    for (YamlNode t : node.oneOrMany(where + ": tags")) {
      String tag = t.string(where + ": tags");
      if (tag == null || tag.isBlank() || tag.length() > 64) {
        t.problem(where + ": a tag is 1 to 64 characters");
      } else if (LOOKS_LIKE_ATTACK.matcher(tag).matches() && Alert.Meta.attackTechnique(tag) == null) {
        t.problem(where + ": tag \"" + tag + "\" is not an ATT&CK technique id (attack.t1046, T1046 or T1046.001)");
      } else {
        tags.add(tag);
      }
    }
    return List.copyOf(tags);
  }

  private static Map<String, String> stringMap(String where, String key, YamlNode node, boolean labelNames) {
    Map<String, String> out = new LinkedHashMap<>();
    for (YamlNode.Entry e : node.entries(where + ": " + key)) {
      String name = e.name();
      if (name == null || labelNames && !LABEL_NAME.matcher(name).matches()) {
        e.key().problem(where + ": " + key + ": \"" + name + "\" is not a label name ([a-zA-Z_][a-zA-Z0-9_]*)");
        continue;
      }
      String v = e.value().string(where + ": " + key + ": " + name);
      if (v != null) {
        out.put(name, v);
      }
    }
    return Map.copyOf(out);
  }

  private static String wire(Enum<?> e) {
    return e.name().toLowerCase(Locale.ROOT).replace('_', '-');
  }
}
