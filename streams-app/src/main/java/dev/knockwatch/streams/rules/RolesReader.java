package dev.knockwatch.streams.rules;

import dev.knockwatch.events.Glob;
import dev.knockwatch.events.config.YamlNode;
import dev.knockwatch.events.config.YamlNode.Entry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * roles.yaml: each role's allowed hosts ({@code roles}), which agents have which role
 * ({@code agents}, globs on agentId, first match wins) and the role of the others
 * ({@code defaultRole}). Every problem is told to the YAML file it came from, with its line.
 */
final class RolesReader {

  /** What roles.yaml says. */
  record Roles(Map<String, Role> roles, List<Policy.AgentRole> agents, String defaultRole) {}

  private RolesReader() {}

  /** The roles of roles.yaml's root node; null when it is not a mapping (the problem is told). */
  static Roles read(YamlNode root) {
    Map<String, Role> roles = new LinkedHashMap<>();
    List<Policy.AgentRole> agents = new ArrayList<>();
    String defaultRole = Policy.DEFAULT_ROLE;
    Map<String, Entry> top = root.mapping(null, Set.of("roles", "agents", "defaultRole")).orElse(null);
    if (top == null) {
      return null;
    }
    Entry rolesEntry = top.get("roles");
    if (rolesEntry == null) {
      root.file().problem(1, "needs a top-level \"roles:\" mapping");
    } else if (!rolesEntry.value().isMapping()) {
      rolesEntry.value().problem("roles must be a mapping of role name to its hosts");
    } else {
      for (Entry t : rolesEntry.value().entries("roles")) {
        String name = t.name();
        Map<String, Entry> keys = t.value().mapping("role " + name, Set.of("hosts", "description")).orElse(null);
        if (keys == null) {
          continue;
        }
        List<Role.HostPattern> hosts = new ArrayList<>();
        for (YamlNode h : list(keys.get("hosts"), "role " + name + ": hosts")) {
          String text = h.text();
          Role.HostPattern p = text == null ? null : Role.HostPattern.parse(text);
          if (p == null) {
            h.problem("role " + name + ": host \"" + text
                + "\" is not a host pattern (a host, *.suffix, either with an optional :port)");
          } else {
            hosts.add(p);
          }
        }
        if (roles.put(name, new Role(name, List.copyOf(hosts))) != null) {
          t.key().problem("role " + name + ": defined twice");
        }
      }
    }
    Entry defaultEntry = top.get("defaultRole");
    if (defaultEntry != null) {
      defaultRole = defaultEntry.value().text();
      if (!roles.containsKey(defaultRole)) {
        defaultEntry.value().problem("defaultRole \"" + defaultRole + "\" is not defined under roles");
      }
    }
    int index = 0;
    for (YamlNode a : list(top.get("agents"), "agents")) {
      index++;
      Map<String, Entry> keys = a.mapping("agents entry " + index, Set.of("match", "role")).orElse(null);
      if (keys == null) {
        continue;
      }
      String match = text(keys.get("match"));
      String role = text(keys.get("role"));
      if (match == null || match.isEmpty() || role == null || role.isEmpty()) {
        a.problem("agents entry " + index + ": needs both match (a glob on agentId) and role");
      } else if (!roles.containsKey(role)) {
        keys.get("role").value().problem("agents entry " + index + ": role \"" + role + "\" is not defined under roles");
      } else {
        agents.add(new Policy.AgentRole(Glob.of(match), role));
      }
    }
    return new Roles(Map.copyOf(roles), List.copyOf(agents), defaultRole);
  }

  private static List<YamlNode> list(Entry entry, String what) {
    return entry == null ? List.of() : entry.value().list(what);
  }

  private static String text(Entry entry) {
    return entry == null ? null : entry.value().text();
  }
}
