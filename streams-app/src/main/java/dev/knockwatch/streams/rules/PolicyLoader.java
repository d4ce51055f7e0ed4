package dev.knockwatch.streams.rules;

import dev.knockwatch.events.ConfigException;
import dev.knockwatch.events.Durations;
import dev.knockwatch.events.Glob;
import dev.knockwatch.events.AddressClass;
import dev.knockwatch.events.Alert.Severity;
import dev.knockwatch.events.Hashes;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Source;
import dev.knockwatch.streams.rules.Rule.Detector;
import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
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
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;

/**
 * Reads and validates an alert-rules directory: {@code rules.yaml} (required) and
 * {@code roles.yaml} (required only by off-role rules and role matches). Every problem is
 * collected, not just the first, each as {@code file:line: what is wrong}, so
 * {@code knockwatch rules check} can list them all.
 */
public final class PolicyLoader {

  public static final String RULES_FILE = "rules.yaml";
  public static final String ROLES_FILE = "roles.yaml";

  /** What fs-guard watches when a rule gives no {@code paths}. */
  public static final List<String> DEFAULT_GUARDED_PATHS = List.of(
      ".bashrc", ".bash_profile", ".zshrc", ".zprofile", ".profile", ".gitconfig", ".gitmodules",
      ".git/hooks/", ".git/config", ".ripgreprc", ".mcp.json", ".vscode/", ".idea/", ".claude/commands/",
      ".claude/agents/", "~/.ssh/", "~/.aws/credentials", ".env");

  private static final Pattern RULE_ID = Pattern.compile("[a-z0-9][a-z0-9-]{0,62}");
  private static final Set<String> COMMON_KEYS = Set.of("id", "detector", "severity", "mode", "match", "except",
      "resolveAfter", "description");
  private static final Map<Detector, Set<String>> DETECTOR_KEYS = Map.of(
      Detector.COUNT, Set.of("window", "hop", "grace", "threshold"),
      Detector.ADDRESS_CLASS, Set.of("classes"),
      Detector.BYPASS, Set.of("within"),
      Detector.FS_GUARD, Set.of("paths"),
      Detector.OFF_ROLE, Set.of(),
      Detector.WALL_BREACH, Set.of(),
      Detector.IDENTITY_CONFLICT, Set.of());
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
      return new PolicyFiles(policy.version(), Files.readString(dir.resolve(RULES_FILE)),
          Files.isRegularFile(roles) ? Files.readString(roles) : null);
    } catch (IOException e) {
      throw new ConfigException(dir + ": cannot read: " + e.getMessage());
    }
  }

  /** The policy of published files; problems name {@code origin}/rules.yaml and so on. */
  public static Policy load(PolicyFiles files, String origin) {
    PolicyLoader loader = new PolicyLoader(Path.of(origin));
    Policy policy = loader.read(files.rules().getBytes(StandardCharsets.UTF_8),
        files.roles() == null ? null : files.roles().getBytes(StandardCharsets.UTF_8));
    if (!loader.problems.isEmpty()) {
      throw new ConfigException(loader.problems);
    }
    return policy;
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
    if (rulesBytes == null) {
      return null;
    }
    return read(rulesBytes, rolesBytes);
  }

  private Policy read(byte[] rulesBytes, byte[] rolesBytes) {
    Path rulesFile = dir.resolve(RULES_FILE);
    Path rolesFile = dir.resolve(ROLES_FILE);
    Roles roles = rolesBytes == null ? null : readRoles(rolesFile, rolesBytes);
    List<Rule> rules = readRules(rulesFile, rulesBytes, roles, rolesFile);
    if (!problems.isEmpty()) {
      return null;
    }
    String version = Hashes.sha256Hex(new String(rulesBytes, StandardCharsets.UTF_8) + "\u0000"
        + (rolesBytes == null ? "" : new String(rolesBytes, StandardCharsets.UTF_8)), 6);
    return roles == null
        ? new Policy(version, Map.of(), List.of(), Policy.DEFAULT_ROLE, rules)
        : new Policy(version, roles.roles, roles.agents, roles.defaultRole, rules);
  }

  private byte[] bytes(Path file) {
    try {
      return Files.readAllBytes(file);
    } catch (IOException e) {
      problems.add(file + ": cannot read: " + e.getMessage());
      return null;
    }
  }

  /** The YAML document as snakeyaml nodes (which keep their line), or null after a syntax problem. */
  private Node compose(Path file, byte[] bytes) {
    try {
      return new Yaml(new SafeConstructor(new LoaderOptions()))
          .compose(new StringReader(new String(bytes, StandardCharsets.UTF_8)));
    } catch (MarkedYAMLException e) {
      int line = e.getProblemMark() == null ? 0 : e.getProblemMark().getLine() + 1;
      problems.add(file + ":" + line + ": not valid YAML: " + (e.getContext() == null ? "" : e.getContext() + ": ")
          + e.getProblem());
      return null;
    } catch (YAMLException e) {
      problems.add(file + ": not valid YAML: " + e.getMessage());
      return null;
    }
  }

  // ---------------------------------------------------------------- roles.yaml

  private record Roles(Map<String, Role> roles, List<Policy.AgentRole> agents, String defaultRole) {}

  private Roles readRoles(Path file, byte[] bytes) {
    Node root = compose(file, bytes);
    if (root == null) {
      return null;
    }
    Map<String, Role> roles = new LinkedHashMap<>();
    List<Policy.AgentRole> agents = new ArrayList<>();
    String defaultRole = Policy.DEFAULT_ROLE;
    Map<String, NodeTuple> top = mapping(file, root, "the file", Set.of("roles", "agents", "defaultRole"));
    if (top == null) {
      return null;
    }
    NodeTuple rolesTuple = top.get("roles");
    if (rolesTuple == null) {
      problems.add(file + ":1: needs a top-level \"roles:\" mapping");
    } else if (!(rolesTuple.getValueNode() instanceof MappingNode m)) {
      problem(file, rolesTuple.getValueNode(), "roles must be a mapping of role name to its hosts");
    } else {
      for (NodeTuple t : m.getValue()) {
        String name = scalar(t.getKeyNode());
        Node body = t.getValueNode();
        Map<String, NodeTuple> keys = mapping(file, body, "role " + name, Set.of("hosts", "description"));
        if (keys == null) {
          continue;
        }
        List<Role.HostPattern> hosts = new ArrayList<>();
        NodeTuple hostsTuple = keys.get("hosts");
        for (Node h : list(file, hostsTuple == null ? null : hostsTuple.getValueNode(), "role " + name + ": hosts")) {
          String text = scalar(h);
          Role.HostPattern p = text == null ? null : Role.HostPattern.parse(text);
          if (p == null) {
            problem(file, h, "role " + name + ": host \"" + text
                + "\" is not a host pattern (a host, *.suffix, either with an optional :port)");
          } else {
            hosts.add(p);
          }
        }
        if (roles.put(name, new Role(name, List.copyOf(hosts))) != null) {
          problem(file, t.getKeyNode(), "role " + name + ": defined twice");
        }
      }
    }
    NodeTuple defaultTuple = top.get("defaultRole");
    if (defaultTuple != null) {
      defaultRole = scalar(defaultTuple.getValueNode());
      if (!roles.containsKey(defaultRole)) {
        problem(file, defaultTuple.getValueNode(), "defaultRole \"" + defaultRole + "\" is not defined under roles");
      }
    }
    NodeTuple agentsTuple = top.get("agents");
    int index = 0;
    for (Node a : list(file, agentsTuple == null ? null : agentsTuple.getValueNode(), "agents")) {
      index++;
      Map<String, NodeTuple> keys = mapping(file, a, "agents entry " + index, Set.of("match", "role"));
      if (keys == null) {
        continue;
      }
      String match = keys.containsKey("match") ? scalar(keys.get("match").getValueNode()) : null;
      String role = keys.containsKey("role") ? scalar(keys.get("role").getValueNode()) : null;
      if (match == null || match.isEmpty() || role == null || role.isEmpty()) {
        problem(file, a, "agents entry " + index + ": needs both match (a glob on agentId) and role");
      } else if (!roles.containsKey(role)) {
        problem(file, keys.get("role").getValueNode(), "agents entry " + index + ": role \"" + role
            + "\" is not defined under roles");
      } else {
        agents.add(new Policy.AgentRole(Glob.of(match), role));
      }
    }
    return new Roles(Map.copyOf(roles), List.copyOf(agents), defaultRole);
  }

  // ---------------------------------------------------------------- rules.yaml

  private List<Rule> readRules(Path file, byte[] bytes, Roles roles, Path rolesFile) {
    Node root = compose(file, bytes);
    List<Rule> out = new ArrayList<>();
    if (root == null) {
      return out;
    }
    Map<String, NodeTuple> top = mapping(file, root, "the file", Set.of("rules"));
    if (top == null) {
      return out;
    }
    NodeTuple rulesTuple = top.get("rules");
    if (rulesTuple == null || !(rulesTuple.getValueNode() instanceof SequenceNode seq)) {
      problems.add(file + ":" + (rulesTuple == null ? 1 : line(rulesTuple.getValueNode()))
          + ": needs a top-level \"rules:\" list");
      return out;
    }
    Map<String, Integer> ids = new HashMap<>();
    int index = 0;
    for (Node node : seq.getValue()) {
      index++;
      Rule rule = readRule(file, node, index, ids, roles, rolesFile);
      if (rule != null) {
        out.add(rule);
      }
    }
    return out;
  }

  private Rule readRule(Path file, Node node, int index, Map<String, Integer> ids, Roles roles, Path rolesFile) {
    if (!(node instanceof MappingNode m)) {
      problem(file, node, "rule " + index + ": must be a mapping (id, detector, ...)");
      return null;
    }
    Map<String, NodeTuple> keys = new LinkedHashMap<>();
    m.getValue().forEach(t -> keys.put(scalar(t.getKeyNode()), t));
    Function<String, Node> value = k -> keys.containsKey(k) ? keys.get(k).getValueNode() : null;

    String id = value.apply("id") == null ? "" : scalar(value.apply("id"));
    if (id == null || !RULE_ID.matcher(id).matches()) {
      problem(file, value.apply("id") == null ? node : value.apply("id"), "rule " + index + ": id \""
          + (id == null ? "" : id) + "\" must be 1-63 of [a-z0-9-], starting with a letter or digit");
      return null;
    }
    String where = "rule " + id;
    Integer firstLine = ids.putIfAbsent(id, line(node));
    if (firstLine != null) {
      problem(file, value.apply("id"), where + ": duplicate id (first at line " + firstLine + ")");
      return null;
    }
    int before = problems.size();
    Node detectorNode = value.apply("detector");
    Detector detector = null;
    if (detectorNode == null) {
      problem(file, node, where + ": detector is missing (one of " + detectorNames() + ")");
    } else {
      detector = Detector.ofWireName(scalar(detectorNode));
      if (detector == null) {
        problem(file, detectorNode, where + ": detector \"" + scalar(detectorNode) + "\" is not one of "
            + detectorNames());
      }
    }
    for (Map.Entry<String, NodeTuple> k : keys.entrySet()) {
      String key = k.getKey();
      if (COMMON_KEYS.contains(key) || (detector != null && DETECTOR_KEYS.get(detector).contains(key))) {
        continue;
      }
      Node keyNode = k.getValue().getKeyNode();
      Detector owner = DETECTOR_KEYS.entrySet().stream().filter(e -> e.getValue().contains(key))
          .map(Map.Entry::getKey).findFirst().orElse(null);
      if (owner == null) {
        problem(file, keyNode, where + ": unknown key \"" + key + "\"");
      } else if (detector != null) {
        problem(file, keyNode, where + ": \"" + key + "\" is a key of " + owner.wireName() + " rules, not of "
            + detector.wireName() + " rules");
      }
    }
    Severity severity = Severity.WARNING;
    if (value.apply("severity") != null) {
      String s = scalar(value.apply("severity"));
      try {
        severity = Severity.valueOf(String.valueOf(s).toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        problem(file, value.apply("severity"), where + ": severity \"" + s + "\" is not one of info, warning, page, critical");
      }
    }
    boolean shadow = false;
    if (value.apply("mode") != null) {
      String mode = scalar(value.apply("mode"));
      if ("shadow".equals(mode)) {
        shadow = true;
      } else if (!"enforce".equals(mode)) {
        problem(file, value.apply("mode"), where + ": mode \"" + mode + "\" is not enforce or shadow");
      }
    }
    Duration resolveAfter = duration(file, where, "resolveAfter", value.apply("resolveAfter"), Rule.DEFAULT_RESOLVE_AFTER);
    RuleMatch match = value.apply("match") == null ? RuleMatch.ANY
        : readMatch(file, where, "match", value.apply("match"), roles, rolesFile);
    if (value.apply("except") != null) {
      match = match.withExcept(readMatch(file, where, "except", value.apply("except"), roles, rolesFile));
    }

    Duration window = null;
    Duration hop = null;
    Duration grace = null;
    int threshold = 0;
    Set<AddressClass> classes = Set.of();
    Duration within = null;
    List<String> paths = List.of();
    if (detector == Detector.COUNT) {
      window = duration(file, where, "window", value.apply("window"), Rule.DEFAULT_WINDOW);
      grace = duration(file, where, "grace", value.apply("grace"), Rule.DEFAULT_GRACE);
      hop = duration(file, where, "hop", value.apply("hop"), null);
      if (hop != null && window != null && hop.compareTo(window) > 0) {
        problem(file, value.apply("hop"), where + ": hop " + scalar(value.apply("hop"))
            + " must not be longer than the window");
      }
      Node t = value.apply("threshold");
      String text = t == null ? null : scalar(t);
      if (text == null || !text.matches("[0-9]{1,9}") || Integer.parseInt(text) < 1) {
        problem(file, t == null ? node : t, where + ": threshold must be a whole number of at least 1, not "
            + (t == null ? "missing" : "\"" + text + "\""));
      } else {
        threshold = Integer.parseInt(text);
      }
    } else if (detector == Detector.ADDRESS_CLASS) {
      Node c = value.apply("classes");
      if (c == null) {
        problem(file, node, where + ": classes is missing (a list of " + classNames() + ")");
      } else {
        Set<AddressClass> set = EnumSet.noneOf(AddressClass.class);
        for (Node n : list(file, c, where + ": classes")) {
          AddressClass ac = addressClass(scalar(n));
          if (ac == null) {
            problem(file, n, where + ": \"" + scalar(n) + "\" is not an address class (" + classNames() + ")");
          } else {
            set.add(ac);
          }
        }
        classes = Set.copyOf(set);
      }
    } else if (detector == Detector.BYPASS) {
      within = duration(file, where, "within", value.apply("within"), Rule.DEFAULT_WITHIN);
    } else if (detector == Detector.FS_GUARD) {
      if (value.apply("paths") == null) {
        paths = DEFAULT_GUARDED_PATHS;
      } else {
        List<String> p = new ArrayList<>();
        for (Node n : list(file, value.apply("paths"), where + ": paths")) {
          String s = scalar(n);
          if (s == null || s.isBlank()) {
            problem(file, n, where + ": paths holds an empty entry");
          } else {
            p.add(s.strip());
          }
        }
        paths = List.copyOf(p);
      }
    } else if (detector == Detector.OFF_ROLE && roles == null) {
      problem(file, detectorNode, where + ": off-role rules need " + ROLES_FILE + " (not found: " + rolesFile + ")");
    }
    if (problems.size() > before || detector == null) {
      return null;
    }
    return new Rule(id, detector, severity, shadow, match, resolveAfter, window, hop, threshold, grace, classes,
        within, paths);
  }

  private RuleMatch readMatch(Path file, String where, String name, Node node, Roles roles, Path rolesFile) {
    Map<String, NodeTuple> keys = mapping(file, node, where + ": " + name, MATCH_KEYS);
    if (keys == null) {
      return RuleMatch.ANY;
    }
    Set<Source> sources = new LinkedHashSet<>();
    Set<Kind> kinds = new LinkedHashSet<>();
    Set<String> matchRoles = new LinkedHashSet<>();
    for (Node n : oneOrMany(file, keys.get("source"), where + ": " + name + ".source")) {
      Source s = Arrays.stream(Source.values()).filter(v -> v.wireName().equals(scalar(n))).findFirst().orElse(null);
      if (s == null) {
        problem(file, n, where + ": " + name + ".source \"" + scalar(n) + "\" is not one of "
            + Arrays.stream(Source.values()).map(Source::wireName).collect(Collectors.joining(", ")));
      } else {
        sources.add(s);
      }
    }
    for (Node n : oneOrMany(file, keys.get("kind"), where + ": " + name + ".kind")) {
      Kind k = Arrays.stream(Kind.values()).filter(v -> wire(v).equals(scalar(n))).findFirst().orElse(null);
      if (k == null) {
        problem(file, n, where + ": " + name + ".kind \"" + scalar(n) + "\" is not one of "
            + Arrays.stream(Kind.values()).map(PolicyLoader::wire).collect(Collectors.joining(", ")));
      } else {
        kinds.add(k);
      }
    }
    for (Node n : oneOrMany(file, keys.get("role"), where + ": " + name + ".role")) {
      String r = scalar(n);
      if (roles == null) {
        problem(file, n, where + ": " + name + ".role \"" + r + "\" needs " + ROLES_FILE + " (not found: " + rolesFile + ")");
      } else if (!roles.roles.containsKey(r) && !r.equals(roles.defaultRole)) {
        problem(file, n, where + ": " + name + ".role \"" + r + "\" is not defined in " + ROLES_FILE);
      } else {
        matchRoles.add(r);
      }
    }
    Glob agent = keys.containsKey("agent") ? Glob.of(scalar(keys.get("agent").getValueNode())) : null;
    Glob host = keys.containsKey("host") ? Glob.of(scalar(keys.get("host").getValueNode())) : null;
    return new RuleMatch(Set.copyOf(sources), Set.copyOf(kinds), Set.copyOf(matchRoles), agent, host, null);
  }

  // ---------------------------------------------------------------- helpers

  /** {@code 30s}, {@code 5m}, {@code 1h}, {@code 250ms}, {@code 1d}; {@code fallback} when absent. */
  private Duration duration(Path file, String where, String key, Node node, Duration fallback) {
    if (node == null) {
      return fallback;
    }
    String text = scalar(node);
    Optional<Duration> parsed = Durations.parse(text);
    if (parsed.isEmpty()) {
      problem(file, node, where + ": " + key + " \"" + text + "\" is not a duration (like 30s, 5m, 1h)");
      return fallback;
    }
    Duration d = parsed.get();
    if (d.isZero() && !key.equals("grace")) {
      problem(file, node, where + ": " + key + " must be longer than zero");
      return fallback;
    }
    return d;
  }

  /** The keys of a mapping node; unknown keys are problems. Null when it is no mapping. */
  private Map<String, NodeTuple> mapping(Path file, Node node, String what, Set<String> allowed) {
    if (!(node instanceof MappingNode m)) {
      problem(file, node, what + " must be a mapping");
      return null;
    }
    Map<String, NodeTuple> out = new LinkedHashMap<>();
    for (NodeTuple t : m.getValue()) {
      String key = scalar(t.getKeyNode());
      if (!allowed.contains(key)) {
        problem(file, t.getKeyNode(), (what.equals("the file") ? "" : what + ": ") + "unknown key \"" + key
            + "\" (known: " + allowed.stream().sorted().collect(Collectors.joining(", ")) + ")");
      } else {
        out.put(key, t);
      }
    }
    return out;
  }

  private List<Node> list(Path file, Node node, String what) {
    if (node == null) {
      return List.of();
    }
    if (!(node instanceof SequenceNode s)) {
      problem(file, node, what + " must be a list");
      return List.of();
    }
    return s.getValue();
  }

  private List<Node> oneOrMany(Path file, NodeTuple tuple, String what) {
    if (tuple == null) {
      return List.of();
    }
    Node v = tuple.getValueNode();
    return v instanceof ScalarNode ? List.of(v) : list(file, v, what);
  }

  private static String scalar(Node node) {
    return node instanceof ScalarNode s ? s.getValue() : null;
  }

  private static int line(Node node) {
    return node.getStartMark().getLine() + 1;
  }

  private void problem(Path file, Node node, String message) {
    problems.add(file + ":" + (node == null ? 1 : line(node)) + ": " + message);
  }

  private static String detectorNames() {
    return Arrays.stream(Detector.values()).map(Detector::wireName).collect(Collectors.joining(", "));
  }

  private static AddressClass addressClass(String name) {
    return Arrays.stream(AddressClass.values()).filter(c -> wire(c).equals(name)).findFirst().orElse(null);
  }

  private static String classNames() {
    return Arrays.stream(AddressClass.values()).map(PolicyLoader::wire).collect(Collectors.joining(", "));
  }

  private static String wire(Enum<?> e) {
    return e.name().toLowerCase(Locale.ROOT).replace('_', '-');
  }
}
