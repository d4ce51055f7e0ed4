package dev.knockwatch.streams.rules;

import dev.knockwatch.events.Glob;
import dev.knockwatch.events.config.Key;
import dev.knockwatch.events.config.KeyValues;
import dev.knockwatch.events.config.YamlNode;
import dev.knockwatch.events.config.YamlNode.Entry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * roles.yaml: each role's allowed hosts ({@code roles}), which agents have which role
 * ({@code agents}, globs on agentId, first match wins) and the role of the others
 * ({@code defaultRole}). Its keys are declared once ({@link Key}); every problem is told to the
 * YAML file it came from, with its line.
 */
final class RolesReader {

  /** What roles.yaml says. */
  record Roles(Map<String, Role> roles, List<Policy.AgentRole> agents, String defaultRole) {}

  // a role's keys
  static final Key<List<Role.HostPattern>> HOSTS = Key.of("hosts", "list of host patterns", List.of(), "none",
      "the hosts its agents may reach: a host, or *.suffix (any name below it), either with an optional :port",
      (node, where) -> {
        List<Role.HostPattern> hosts = new ArrayList<>();
        for (YamlNode h : node.list(where + ": hosts")) {
          String text = h.text();
          Role.HostPattern p = text == null ? null : Role.HostPattern.parse(text);
          if (p == null) {
            h.problem(where + ": host \"" + text + "\" is not a host pattern (a host, *.suffix, either with an optional :port)");
          } else {
            hosts.add(p);
          }
        }
        return List.copyOf(hosts);
      });
  static final Key<String> DESCRIPTION = Key.of("description", "text", null, "none", "what the role is for",
      (node, where) -> node.text());
  static final List<Key<?>> ROLE_KEYS = List.of(HOSTS, DESCRIPTION);

  // an agents entry's keys
  static final Key<String> MATCH = Key.of("match", "glob on agentId", null, "required", "the agents it gives the role",
      (node, where) -> node.text());
  static final Key<String> ROLE = Key.of("role", "a role's name", null, "required", "their role", (node, where) -> node.text());
  static final List<Key<?>> AGENT_KEYS = List.of(MATCH, ROLE);

  // the file's keys; a problem here names no holder
  static final Key<Map<String, Role>> ROLES = Key.of("roles", "mapping of role name to its keys", Map.of(), "required",
      "the roles, each with its hosts", (node, where) -> {
        if (!node.isMapping()) {
          node.problem("roles must be a mapping of role name to its hosts");
          return null;
        }
        Map<String, Role> roles = new LinkedHashMap<>();
        for (Entry t : node.entries("roles")) {
          String name = t.name();
          KeyValues role = KeyValues.of(t.value(), "role " + name, ROLE_KEYS).orElse(null);
          if (role != null && roles.put(name, new Role(name, role.get(HOSTS))) != null) {
            t.key().problem("role " + name + ": defined twice");
          }
        }
        return roles;
      });
  static final Key<String> DEFAULT_ROLE = Key.of("defaultRole", "a role's name", Policy.DEFAULT_ROLE, Policy.DEFAULT_ROLE,
      "the role of an agent no glob matches", (node, where) -> node.text());
  static final Key<List<YamlNode>> AGENTS = Key.of("agents", "list of match and role", List.of(), "none",
      "which agents have which role: the first whose glob matches an agentId", (node, where) -> node.list("agents"));
  static final List<Key<?>> KEYS = List.of(ROLES, AGENTS, DEFAULT_ROLE);

  private RolesReader() {}

  /** The roles of roles.yaml's root node; null when it is not a mapping (the problem is told). */
  static Roles read(YamlNode root) {
    Set<String> names = new LinkedHashSet<>();
    KEYS.forEach(k -> names.add(k.name()));
    Map<String, YamlNode> given = new LinkedHashMap<>();
    Map<String, Entry> top = root.mapping(null, names).orElse(null);
    if (top == null) {
      return null;
    }
    top.forEach((k, e) -> given.put(k, e.value()));
    KeyValues file = new KeyValues(null, root, given);
    file.read(ROLES);
    if (!file.given(ROLES)) {
      root.file().problem(1, "needs a top-level \"roles:\" mapping");
    }
    Map<String, Role> roles = new LinkedHashMap<>(file.get(ROLES));
    file.read(DEFAULT_ROLE);
    if (file.given(DEFAULT_ROLE) && !roles.containsKey(file.text(DEFAULT_ROLE))) {
      file.node(DEFAULT_ROLE).problem("defaultRole \"" + file.text(DEFAULT_ROLE) + "\" is not defined under roles");
    }
    file.read(AGENTS);
    List<Policy.AgentRole> agents = new ArrayList<>();
    int index = 0;
    for (YamlNode a : file.get(AGENTS)) {
      index++;
      KeyValues entry = KeyValues.of(a, "agents entry " + index, AGENT_KEYS).orElse(null);
      if (entry == null) {
        continue;
      }
      String match = entry.get(MATCH);
      String role = entry.get(ROLE);
      if (match == null || match.isEmpty() || role == null || role.isEmpty()) {
        a.problem("agents entry " + index + ": needs both match (a glob on agentId) and role");
      } else if (!roles.containsKey(role)) {
        entry.problem(ROLE, "role \"" + role + "\" is not defined under roles");
      } else {
        agents.add(new Policy.AgentRole(Glob.of(match), role));
      }
    }
    return new Roles(Map.copyOf(roles), List.copyOf(agents), file.get(DEFAULT_ROLE));
  }
}
