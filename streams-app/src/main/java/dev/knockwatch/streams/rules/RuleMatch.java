package dev.knockwatch.streams.rules;

import dev.knockwatch.events.Glob;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.ViolationEvent;
import java.util.Set;

/**
 * A rule's optional {@code match}: which refusals it looks at. Every given part must match; an
 * empty set or a null glob matches everything. {@code except} (same keys, may be null) takes
 * refusals back out: {@code except: {role: guard-probe}} keeps the guard probes' expected
 * refusals from paging.
 */
public record RuleMatch(Set<String> sources, Set<Kind> kinds, Set<String> roles, Glob agent, Glob host,
    RuleMatch except) {

  public static final RuleMatch ANY = new RuleMatch(Set.of(), Set.of(), Set.of(), null, null, null);

  public RuleMatch withExcept(RuleMatch other) {
    return new RuleMatch(sources, kinds, roles, agent, host, other);
  }

  public boolean matches(ViolationEvent e, String role) {
    return own(e, role) && (except == null || !except.own(e, role));
  }

  private boolean own(ViolationEvent e, String role) {
    return (sources.isEmpty() || sources.contains(e.source()))
        && (kinds.isEmpty() || kinds.contains(e.kind()))
        && (roles.isEmpty() || roles.contains(role))
        && (agent == null || (e.agentId() != null && agent.matches(e.agentId())))
        && (host == null || (e.host() != null && host.matches(e.host())));
  }
}
