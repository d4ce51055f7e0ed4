package dev.knockwatch.streams.rules;

import dev.knockwatch.events.config.Key;
import dev.knockwatch.events.config.KeyValues;
import dev.knockwatch.events.config.ConfigException;
import dev.knockwatch.events.config.YamlFile;
import dev.knockwatch.events.config.YamlNode;
import dev.knockwatch.events.config.YamlNode.Entry;
import dev.knockwatch.events.Hashes;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Reads and validates an alert-rules directory: {@code rules.yaml} (required) and
 * {@code roles.yaml} (required only by off-role rules and role matches). Every problem is
 * collected, not just the first, each as {@code file:line: what is wrong}, so
 * {@code knockwatch rules check} can list them all.
 */
public final class PolicyLoader {

  public static final String RULES_FILE = "rules.yaml";
  public static final String ROLES_FILE = "roles.yaml";
  /** Further rule files beside rules.yaml: {@code <name>.rules.yaml}, read in name order. */
  public static final String MORE_RULES_SUFFIX = ".rules.yaml";


  private final Path dir;
  private final List<String> problems = new ArrayList<>();

  private PolicyLoader(Path dir) {
    this.dir = dir;
  }

  /** The policy of {@code dir}; a {@link ConfigException} lists every problem. */
  public static Policy load(Path dir) {
    PolicyLoader loader = new PolicyLoader(dir);
    Policy policy = loader.read();
    if (!loader.problems.isEmpty()) {
      throw new ConfigException(loader.problems);
    }
    return policy;
  }

  /** Every problem of {@code dir}, in file then line order; empty when it loads. */
  public static List<String> check(Path dir) {
    PolicyLoader loader = new PolicyLoader(dir);
    loader.read();
    return List.copyOf(loader.problems);
  }

  /**
   * The files of {@code dir} as published on {@code knockwatch.policy}: their text and version;
   * a {@link ConfigException} lists every problem.
   */
  public static PolicyFiles files(Path dir) {
    Policy policy = load(dir);
    try {
      Path roles = dir.resolve(ROLES_FILE);
      java.util.TreeMap<String, String> more = new java.util.TreeMap<>();
      for (Path f : moreRuleFiles(dir)) {
        more.put(f.getFileName().toString(), Files.readString(f));
      }
      return new PolicyFiles(policy.version(), Files.readString(dir.resolve(RULES_FILE)),
          Files.isRegularFile(roles) ? Files.readString(roles) : null, more);
    } catch (IOException e) {
      throw new ConfigException(dir + ": cannot read: " + e.getMessage());
    }
  }

  /** The policy of published files; problems name {@code origin}/rules.yaml and so on. */
  public static Policy load(PolicyFiles files, String origin) {
    PolicyLoader loader = new PolicyLoader(Path.of(origin));
    Map<String, byte[]> more = new java.util.TreeMap<>();
    files.moreRules().forEach((name, text) -> more.put(name, text.getBytes(StandardCharsets.UTF_8)));
    Policy policy = loader.read(files.rules().getBytes(StandardCharsets.UTF_8),
        files.roles() == null ? null : files.roles().getBytes(StandardCharsets.UTF_8), more);
    if (!loader.problems.isEmpty()) {
      throw new ConfigException(loader.problems);
    }
    return policy;
  }

  /** The {@code *.rules.yaml} files of {@code dir}, in name order. */
  static List<Path> moreRuleFiles(Path dir) throws IOException {
    try (java.util.stream.Stream<Path> files = Files.list(dir)) {
      return files.filter(f -> f.getFileName().toString().endsWith(MORE_RULES_SUFFIX) && Files.isRegularFile(f))
          .sorted().toList();
    }
  }

  private Policy read() {
    Path rulesFile = dir.resolve(RULES_FILE);
    Path rolesFile = dir.resolve(ROLES_FILE);
    if (!Files.isRegularFile(rulesFile)) {
      problems.add(rulesFile + ": not found (the rules directory must hold " + RULES_FILE + ")");
      return null;
    }
    byte[] rulesBytes = bytes(rulesFile);
    byte[] rolesBytes = Files.isRegularFile(rolesFile) ? bytes(rolesFile) : null;
    Map<String, byte[]> more = new java.util.TreeMap<>();
    try {
      for (Path f : moreRuleFiles(dir)) {
        byte[] b = bytes(f);
        if (b != null) {
          more.put(f.getFileName().toString(), b);
        }
      }
    } catch (IOException e) {
      problems.add(dir + ": cannot list: " + e.getMessage());
    }
    if (rulesBytes == null) {
      return null;
    }
    return read(rulesBytes, rolesBytes, more);
  }

  private Policy read(byte[] rulesBytes, byte[] rolesBytes, Map<String, byte[]> more) {
    Path rulesFile = dir.resolve(RULES_FILE);
    Path rolesFile = dir.resolve(ROLES_FILE);
    RolesReader.Roles roles = rolesBytes == null ? null : parse(rolesFile, rolesBytes).map(RolesReader::read).orElse(null);
    Map<String, String> ids = new HashMap<>();
    List<Rule> rules = new ArrayList<>(readRules(rulesFile, rulesBytes, roles, rolesFile, ids));
    StringBuilder text = new StringBuilder(new String(rulesBytes, StandardCharsets.UTF_8)).append('\u0000')
        .append(rolesBytes == null ? "" : new String(rolesBytes, StandardCharsets.UTF_8));
    for (Map.Entry<String, byte[]> f : more.entrySet()) {
      rules.addAll(readRules(dir.resolve(f.getKey()), f.getValue(), roles, rolesFile, ids));
      text.append('\u0000').append(f.getKey()).append('\u0000').append(new String(f.getValue(), StandardCharsets.UTF_8));
    }
    if (!problems.isEmpty()) {
      return null;
    }
    String version = Hashes.sha256Hex(text.toString(), 6);
    return roles == null
        ? new Policy(version, Map.of(), List.of(), Policy.DEFAULT_ROLE, rules)
        : new Policy(version, roles.roles(), roles.agents(), roles.defaultRole(), rules);
  }

  private byte[] bytes(Path file) {
    try {
      return Files.readAllBytes(file);
    } catch (IOException e) {
      problems.add(file + ": cannot read: " + e.getMessage());
      return null;
    }
  }

  /** The YAML document's root, or empty after a syntax problem (or when it is empty). */
  private Optional<YamlNode> parse(Path file, byte[] bytes) {
    return new YamlFile(file.toString(), problems).parse(new String(bytes, StandardCharsets.UTF_8));
  }

  // ---------------------------------------------------------------- rules.yaml

  /** The rules of one rules file; {@code ids} (id -> where it was first given) spans every file. */
  private List<Rule> readRules(Path file, byte[] bytes, RolesReader.Roles roles, Path rolesFile, Map<String, String> ids) {
    YamlNode root = parse(file, bytes).orElse(null);
    List<Rule> out = new ArrayList<>();
    if (root == null) {
      return out;
    }
    Map<String, Entry> top = root.mapping(null, Set.of("rules")).orElse(null);
    if (top == null) {
      return out;
    }
    Entry rulesEntry = top.get("rules");
    if (rulesEntry == null || !rulesEntry.value().isList()) {
      root.file().problem(rulesEntry == null ? 1 : rulesEntry.value().line(), "needs a top-level \"rules:\" list");
      return out;
    }
    int index = 0;
    for (YamlNode node : rulesEntry.value().list("rules")) {
      index++;
      Rule rule = readRule(node, index, ids, roles, rolesFile);
      if (rule != null) {
        out.add(rule);
      }
    }
    return out;
  }

  private Rule readRule(YamlNode node, int index, Map<String, String> ids, RolesReader.Roles roles, Path rolesFile) {
    if (!node.isMapping()) {
      node.problem("rule " + index + ": must be a mapping (id, detector, ...)");
      return null;
    }
    Map<String, Entry> keys = new LinkedHashMap<>();
    node.entries("rule " + index).forEach(e -> keys.put(e.name(), e));
    Map<String, YamlNode> given = new LinkedHashMap<>();
    keys.forEach((k, e) -> given.put(k, e.value()));

    KeyValues numbered = new KeyValues("rule " + index, node, given);
    numbered.read(RuleKeys.ID);
    String id = numbered.get(RuleKeys.ID);
    if (id == null) {
      return null;
    }
    KeyValues values = new KeyValues("rule " + id, node, given);
    String first = ids.putIfAbsent(id, node.file().name() + ":" + node.line());
    if (first != null) {
      boolean sameFile = first.startsWith(node.file().name() + ":");
      values.problem(RuleKeys.ID, "duplicate id (first at " + (sameFile ? "line " + first.substring(first.lastIndexOf(':') + 1)
          : first) + ")");
      return null;
    }
    int before = problems.size();
    values.read(RuleKeys.DETECTOR);
    Detector<?> detector = values.get(RuleKeys.DETECTOR);
    for (Map.Entry<String, Entry> k : keys.entrySet()) {
      String key = k.getKey();
      if (takes(RuleKeys.ALL, key) || (detector != null && takes(detector.spec().keys(), key))) {
        continue;
      }
      YamlNode keyNode = k.getValue().key();
      List<String> owners = Detectors.ALL.stream().filter(d -> takes(d.spec().keys(), key)).map(d -> d.spec().name()).toList();
      if (owners.isEmpty()) {
        keyNode.problem(values.where() + ": unknown key \"" + key + "\"");
      } else if (detector != null) {
        keyNode.problem(values.where() + ": \"" + key + "\" is a key of " + String.join(" and ", owners) + " rules, not of "
            + detector.spec().name() + " rules");
      }
    }
    List.of(RuleKeys.SEVERITY, RuleKeys.MODE, RuleKeys.RESOLVE_AFTER).forEach(values::read);
    RuleMatch match = readMatch(values, RuleKeys.MATCH, roles, rolesFile);
    RuleMatch except = readMatch(values, RuleKeys.EXCEPT, roles, rolesFile);
    Detector.Settings settings = null;
    Grain per = Grain.COMMAND;
    if (detector != null) {
      detector.spec().keys().forEach(values::read);
      settings = detector.settings(values);
      if (detector.spec().keys().contains(Grain.PER)) {
        per = values.get(Grain.PER);
      }
      if (detector.spec().needsRoles() && roles == null) {
        values.problem(RuleKeys.DETECTOR, detector.spec().name() + " rules need " + ROLES_FILE + " (not found: " + rolesFile + ")");
      }
    }
    List.of(RuleKeys.TAGS, RuleKeys.RUNBOOK, RuleKeys.LABELS, RuleKeys.ANNOTATIONS, RuleKeys.ENABLED, RuleKeys.DESCRIPTION)
        .forEach(values::read);
    if (problems.size() > before || detector == null || !values.get(RuleKeys.ENABLED)) {
      return null; // a disabled rule is checked like the others, then left out
    }
    return new Rule(id, values.get(RuleKeys.SEVERITY), values.get(RuleKeys.MODE),
        (match == null ? RuleMatch.ANY : match).withExcept(except), values.get(RuleKeys.RESOLVE_AFTER), RuleKeys.meta(values),
        per, settings);
  }

  private static boolean takes(List<Key<?>> keys, String key) {
    return keys.stream().anyMatch(k -> k.name().equals(key));
  }

  /**
   * Reads {@code key} ({@code match} or {@code except}), each role it names checked against
   * roles.yaml at its line; null when the rule does not give it.
   */
  private RuleMatch readMatch(KeyValues values, Key<KeyValues> key, RolesReader.Roles roles, Path rolesFile) {
    values.read(key);
    KeyValues m = values.get(key);
    if (m == null) {
      return null;
    }
    YamlNode named = m.node(RuleKeys.ROLE);
    String what = m.where() + ".role";
    for (YamlNode n : named == null || named.isMapping() ? List.<YamlNode>of() : named.oneOrMany(what)) {
      String r = n.text();
      if (r == null) {
        continue; // not a name: told when read
      }
      if (roles == null) {
        n.problem(what + " \"" + r + "\" needs " + ROLES_FILE + " (not found: " + rolesFile + ")");
      } else if (!roles.roles().containsKey(r) && !r.equals(roles.defaultRole())) {
        n.problem(what + " \"" + r + "\" is not defined in " + ROLES_FILE);
      }
    }
    return RuleKeys.match(m);
  }
}
