package dev.knockwatch.streams.rules;

import dev.knockwatch.events.Glob;
import java.util.List;
import java.util.Map;

/**
 * The rules and roles of one alert-rules directory, as one versioned value: every alert records
 * the {@code version} it was raised under.
 *
 * @param version a hash of the files' bytes
 * @param roles the roles by name
 * @param agents which role an agent has: the first glob that matches its agentId wins
 * @param defaultRole the role of an agent no glob matches (it need not be defined: an undefined
 *     role allows no host)
 */
public record Policy(String version, Map<String, Role> roles, List<AgentRole> agents, String defaultRole,
    List<Rule> rules) {

  public static final String DEFAULT_ROLE = "default";

  /** {@code match: "ci-runner-*"} gives {@code role: ci}. */
  public record AgentRole(Glob match, String role) {}

  /** A policy of these rules and no roles (every agent has the default role). */
  public static Policy ofRules(List<Rule> rules) {
    return new Policy("none", Map.of(), List.of(), DEFAULT_ROLE, List.copyOf(rules));
  }

  public String roleOf(String agentId) {
    if (agentId != null) {
      for (AgentRole a : agents) {
        if (a.match().matches(agentId)) {
          return a.role();
        }
      }
    }
    return defaultRole;
  }

  /** The role by name; an undefined one allows nothing. */
  public Role role(String name) {
    return roles.getOrDefault(name, new Role(name, List.of()));
  }

  /** The rules of one detector, by its settings' type ({@code CountDetector.Settings.class}). */
  public List<Rule> rules(Class<? extends Detector.Settings> detector) {
    return rules.stream().filter(r -> r.is(detector)).toList();
  }
}
