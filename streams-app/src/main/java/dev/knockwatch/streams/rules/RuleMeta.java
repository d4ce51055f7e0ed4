package dev.knockwatch.streams.rules;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.config.YamlNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Pattern;

/** What a rule says of itself in rules.yaml (tags, runbook, labels, annotations), read for {@link PolicyLoader}. */
final class RuleMeta {

  private static final Pattern LOOKS_LIKE_ATTACK = Pattern.compile("(?i)(?:attack\\.t|t)\\d.*");
  private static final Pattern LABEL_NAME = Pattern.compile("[a-zA-Z_][a-zA-Z0-9_]{0,62}");

  private RuleMeta() {}

  /** {@code tags}, {@code runbook}, {@code labels}, {@code annotations}; null when none is given. */
  static Alert.Meta read(String where, Function<String, YamlNode> value) {
    List<String> tags = new ArrayList<>();
    if (value.apply("tags") != null) {
      for (YamlNode t : value.apply("tags").oneOrMany(where + ": tags")) {
        String tag = t.string(where + ": tags");
        if (tag == null || tag.isBlank() || tag.length() > 64) {
          t.problem(where + ": a tag is 1 to 64 characters");
        } else if (LOOKS_LIKE_ATTACK.matcher(tag).matches() && Alert.Meta.attackTechnique(tag) == null) {
          t.problem(where + ": tag \"" + tag + "\" is not an ATT&CK technique id (attack.t1046, T1046 or T1046.001)");
        } else {
          tags.add(tag);
        }
      }
    }
    String runbook = null;
    YamlNode r = value.apply("runbook");
    if (r != null) {
      runbook = r.string(where + ": runbook");
      if (runbook != null && !runbook.matches("https?://[^\\s]+")) {
        r.problem(where + ": runbook \"" + runbook + "\" is not an http(s) URL");
        runbook = null;
      }
    }
    Map<String, String> labels = stringMap(where, "labels", value.apply("labels"), true);
    Map<String, String> annotations = stringMap(where, "annotations", value.apply("annotations"), false);
    if (tags.isEmpty() && runbook == null && labels.isEmpty() && annotations.isEmpty()) {
      return null;
    }
    return new Alert.Meta(List.copyOf(tags), runbook, Map.copyOf(labels), Map.copyOf(annotations));
  }

  private static Map<String, String> stringMap(String where, String key, YamlNode node, boolean labelNames) {
    Map<String, String> out = new LinkedHashMap<>();
    if (node == null) {
      return out;
    }
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
    return out;
  }
}
