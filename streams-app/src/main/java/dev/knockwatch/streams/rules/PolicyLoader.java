package dev.knockwatch.streams.rules;

import dev.knockwatch.events.config.KeyValues;
import dev.knockwatch.events.config.ConfigException;
import dev.knockwatch.events.config.YamlFile;
import dev.knockwatch.events.config.YamlNode;
import dev.knockwatch.events.config.YamlNode.Entry;
import dev.knockwatch.events.Glob;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Alert.Severity;
import dev.knockwatch.events.Hashes;
import dev.knockwatch.events.EventSource;
import dev.knockwatch.events.EventSources;
import dev.knockwatch.events.Kind;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

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

  private static final Pattern RULE_ID = Pattern.compile("[a-z0-9][a-z0-9-]{0,62}");
  private static final Set<String> COMMON_KEYS = Set.of("id", "detector", "severity", "mode", "match", "except",
      "resolveAfter", "description", "enabled", "tags", "runbook", "labels", "annotations");
  private static final Set<String> MATCH_KEYS = Set.of("source", "kind", "role", "agent", "host");

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
    Function<String, YamlNode> value = k -> keys.containsKey(k) ? keys.get(k).value() : null;

    String id = value.apply("id") == null ? "" : value.apply("id").text();
    if (id == null || !RULE_ID.matcher(id).matches()) {
      (value.apply("id") == null ? node : value.apply("id")).problem("rule " + index + ": id \""
          + (id == null ? "" : id) + "\" must be 1-63 of [a-z0-9-], starting with a letter or digit");
      return null;
    }
    String where = "rule " + id;
    String here = node.file().name() + ":" + node.line();
    String first = ids.putIfAbsent(id, here);
    if (first != null) {
      boolean sameFile = first.startsWith(node.file().name() + ":");
      value.apply("id").problem(where + ": duplicate id (first at " + (sameFile ? "line " + first.substring(first.lastIndexOf(':') + 1)
          : first) + ")");
      return null;
    }
    int before = problems.size();
    YamlNode detectorNode = value.apply("detector");
    Detector<?> detector = null;
    if (detectorNode == null) {
      node.problem(where + ": detector is missing (one of " + detectorNames() + ")");
    } else {
      detector = Detectors.named(detectorNode.text());
      if (detector == null) {
        detectorNode.problem(where + ": detector \"" + detectorNode.text() + "\" is not one of " + detectorNames());
      }
    }
    for (Map.Entry<String, Entry> k : keys.entrySet()) {
      String key = k.getKey();
      if (COMMON_KEYS.contains(key) || (detector != null && takes(detector, key))) {
        continue;
      }
      YamlNode keyNode = k.getValue().key();
      List<String> owners = Detectors.ALL.stream().filter(d -> takes(d, key)).map(d -> d.spec().name()).toList();
      if (owners.isEmpty()) {
        keyNode.problem(where + ": unknown key \"" + key + "\"");
      } else if (detector != null) {
        keyNode.problem(where + ": \"" + key + "\" is a key of " + String.join(" and ", owners) + " rules, not of "
            + detector.spec().name() + " rules");
      }
    }
    Severity severity = Severity.WARNING;
    if (value.apply("severity") != null) {
      String s = value.apply("severity").text();
      try {
        severity = Severity.valueOf(String.valueOf(s).toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        value.apply("severity").problem(where + ": severity \"" + s + "\" is not one of info, warning, page, critical");
      }
    }
    boolean shadow = false;
    if (value.apply("mode") != null) {
      String mode = value.apply("mode").text();
      if ("shadow".equals(mode)) {
        shadow = true;
      } else if (!"enforce".equals(mode)) {
        value.apply("mode").problem(where + ": mode \"" + mode + "\" is not enforce or shadow");
      }
    }
    Duration resolveAfter = duration(where, "resolveAfter", value.apply("resolveAfter"), Rule.DEFAULT_RESOLVE_AFTER);
    RuleMatch match = value.apply("match") == null ? RuleMatch.ANY
        : readMatch(where, "match", value.apply("match"), roles, rolesFile);
    if (value.apply("except") != null) {
      match = match.withExcept(readMatch(where, "except", value.apply("except"), roles, rolesFile));
    }
    Detector.Settings settings = null;
    Grain per = Grain.COMMAND;
    if (detector != null) {
      Map<String, YamlNode> given = new HashMap<>();
      keys.forEach((k, e) -> given.put(k, e.value()));
      KeyValues values = new KeyValues(where, node, given);
      detector.spec().keys().forEach(values::read);
      settings = detector.settings(values);
      if (detector.spec().keys().contains(Grain.PER)) {
        per = values.get(Grain.PER);
      }
      if (detector.spec().needsRoles() && roles == null) {
        detectorNode.problem(where + ": " + detector.spec().name() + " rules need " + ROLES_FILE + " (not found: " + rolesFile + ")");
      }
    }
    Alert.Meta meta = RuleMeta.read(where, value);
    boolean enabled = true;
    if (value.apply("enabled") != null) {
      Optional<Boolean> b = value.apply("enabled").bool();
      if (b.isEmpty()) {
        value.apply("enabled").problem(where + ": enabled must be true or false");
      }
      enabled = b.orElse(true);
    }
    if (problems.size() > before || detector == null || !enabled) {
      return null; // a disabled rule is checked like the others, then left out
    }
    return new Rule(id, severity, shadow, match, resolveAfter, meta, per, settings);
  }

  private static boolean takes(Detector<?> d, String key) {
    return d.spec().keys().stream().anyMatch(s -> s.name().equals(key));
  }

  private RuleMatch readMatch(String where, String name, YamlNode node, RolesReader.Roles roles, Path rolesFile) {
    Map<String, Entry> keys = node.mapping(where + ": " + name, MATCH_KEYS).orElse(null);
    if (keys == null) {
      return RuleMatch.ANY;
    }
    Set<String> sources = new LinkedHashSet<>();
    Set<Kind> kinds = new LinkedHashSet<>();
    Set<String> matchRoles = new LinkedHashSet<>();
    for (YamlNode n : oneOrMany(keys.get("source"), where + ": " + name + ".source")) {
      String s = EventSources.named(n.text()).map(EventSource::wireName).orElse(null);
      if (s == null) {
        n.problem(where + ": " + name + ".source \"" + n.text() + "\" is not one of " + EventSources.names());
      } else {
        sources.add(s);
      }
    }
    for (YamlNode n : oneOrMany(keys.get("kind"), where + ": " + name + ".kind")) {
      Kind k = Arrays.stream(Kind.values()).filter(v -> wire(v).equals(n.text())).findFirst().orElse(null);
      if (k == null) {
        n.problem(where + ": " + name + ".kind \"" + n.text() + "\" is not one of "
            + Arrays.stream(Kind.values()).map(PolicyLoader::wire).collect(Collectors.joining(", ")));
      } else {
        kinds.add(k);
      }
    }
    for (YamlNode n : oneOrMany(keys.get("role"), where + ": " + name + ".role")) {
      String r = n.text();
      if (roles == null) {
        n.problem(where + ": " + name + ".role \"" + r + "\" needs " + ROLES_FILE + " (not found: " + rolesFile + ")");
      } else if (!roles.roles().containsKey(r) && !r.equals(roles.defaultRole())) {
        n.problem(where + ": " + name + ".role \"" + r + "\" is not defined in " + ROLES_FILE);
      } else {
        matchRoles.add(r);
      }
    }
    Glob agent = keys.containsKey("agent") ? Glob.of(text(keys.get("agent"))) : null;
    Glob host = keys.containsKey("host") ? Glob.of(text(keys.get("host"))) : null;
    return new RuleMatch(Set.copyOf(sources), Set.copyOf(kinds), Set.copyOf(matchRoles), agent, host, null);
  }

  // ---------------------------------------------------------------- helpers

  /** A duration ({@code 30s}, {@code 5m}, {@code 1h}, {@code 250ms}, {@code 1d}) longer than zero but for grace; {@code fallback} when absent. */
  private Duration duration(String where, String key, YamlNode node, Duration fallback) {
    if (node == null) {
      return fallback;
    }
    Optional<Duration> parsed = node.duration(where + ": " + key);
    if (parsed.isEmpty()) {
      return fallback;
    }
    Duration d = parsed.get();
    if (d.isZero() && !key.equals("grace")) {
      node.problem(where + ": " + key + " must be longer than zero");
      return fallback;
    }
    return d;
  }

  private static List<YamlNode> list(Entry entry, String what) {
    return entry == null ? List.of() : entry.value().list(what);
  }

  private static List<YamlNode> oneOrMany(Entry entry, String what) {
    return entry == null ? List.of() : entry.value().oneOrMany(what);
  }

  private static String text(Entry entry) {
    return entry == null ? null : entry.value().text();
  }

  private static String detectorNames() {
    return Detectors.ALL.stream().map(d -> d.spec().name()).collect(Collectors.joining(", "));
  }

  private static String wire(Enum<?> e) {
    return e.name().toLowerCase(Locale.ROOT).replace('_', '-');
  }
}
