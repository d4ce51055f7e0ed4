package dev.knockwatch.streams.discover;

import dev.knockwatch.events.AddressClass;
import dev.knockwatch.events.Glob;
import dev.knockwatch.events.HostClassifier;
import dev.knockwatch.events.KnownHosts;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.Role;
import dev.knockwatch.streams.rules.Rule;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * What {@code allowlist suggest} and the console's Discover view answer: per role, the refused
 * destinations of a time range from the {@link RoleHour} buckets (never a scan of the timeline),
 * each exactly as refused ({@code host:port}, never widened to a parent domain), ranked by how many
 * distinct commands, tasks and agents needed it, with a note for each risk, and whether it is
 * proposed at all. Never proposed: a sensitive address class ({@link #NEVER}), what is not a host
 * name or an address, a shortener, a paste or file-drop site, a destination that drew a bypass or sandbox-escape alert.
 */
public final class Allowlist {

  /** Address classes never proposed: everything but public and internal (private, shared) space. */
  public static final Set<AddressClass> NEVER = EnumSet.complementOf(
      EnumSet.of(AddressClass.PUBLIC, AddressClass.PRIVATE, AddressClass.CGNAT, AddressClass.UNKNOWN));
  /** Detectors whose alert on a destination keeps it off the list. */
  static final Set<String> ALARMING = Set.of("bypass", "sandbox-escape");

  private Allowlist() {}

  public record Risk(String code, String note) {}

  public record Host(String target, String host, Integer port, long refusals, long commands, long tasks, long agents,
      List<String> agentNames, Instant firstSeen, Instant lastSeen, String addressClass, boolean inRole,
      boolean proposed, List<Risk> risks) {}

  /**
   * @param dropped refusals in the range whose destination found no place in a full hour (the
   *     aggregate's bound at work): the list is then not every destination
   */
  public record RoleHosts(String role, List<String> allows, long dropped, long destinations, List<Host> hosts) {}

  /**
   * The roles' destinations refused in [since, until), from the hours' buckets ({@link Buckets}); only
   * {@code role} when given, only destinations one of whose first agents matches {@code agent}
   * when given; at most {@code limit} per role, the most needed first.
   */
  public static List<RoleHosts> suggest(List<RoleHour> buckets, Policy policy, String role, Glob agent, Instant since,
      Instant until, int limit) {
    Map<String, Map<String, HostTally>> merged = new TreeMap<>();
    Map<String, Long> dropped = new TreeMap<>();
    for (RoleHour h : buckets) {
      if (role != null && !role.equals(h.role)) {
        continue;
      }
      dropped.merge(h.role, h.dropped, Long::sum);
      Map<String, HostTally> hosts = merged.computeIfAbsent(h.role, k -> new LinkedHashMap<>());
      for (HostTally t : h.hosts) {
        if (t.firstSeen >= until.toEpochMilli() || t.lastSeen < since.toEpochMilli()) {
          continue;
        }
        HostTally into = hosts.get(t.target());
        if (into == null) {
          hosts.put(t.target(), t.copy());
        } else {
          into.merge(t);
        }
      }
    }
    List<RoleHosts> out = new ArrayList<>();
    for (Map.Entry<String, Map<String, HostTally>> e : merged.entrySet()) {
      Role r = policy == null ? new Role(e.getKey(), List.of()) : policy.role(e.getKey());
      List<HostTally> tallies = new ArrayList<>(e.getValue().values());
      if (agent != null) {
        tallies.removeIf(t -> t.agentNames.stream().noneMatch(agent::matches));
      }
      tallies.sort(NEEDED_MOST.reversed());
      List<Host> hosts = tallies.stream().limit(limit).map(t -> host(t, r, policy)).toList();
      out.add(new RoleHosts(e.getKey(), r.hosts().stream().map(Role.HostPattern::text).toList(),
          dropped.getOrDefault(e.getKey(), 0L), tallies.size(), hosts));
    }
    return out;
  }

  /** Distinct commands, then tasks, then agents, then refusals; then the target, so ties read alike. */
  static final Comparator<HostTally> NEEDED_MOST = Comparator.<HostTally>comparingLong(t -> t.commands.estimate())
      .thenComparingLong(t -> t.tasks.estimate()).thenComparingLong(t -> t.agents.estimate())
      .thenComparingLong(t -> t.refusals).thenComparing(HostTally::target, Comparator.reverseOrder());

  /** A DNS name of letters, digits and hyphens (IDNs in their ASCII form): no wildcard, nothing to widen. */
  static final Pattern NAME = Pattern.compile(
      "(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*");

  static Host host(HostTally t, Role role, Policy policy) {
    String h = HostClassifier.canonical(t.host);
    Integer port = t.port < 0 ? null : t.port;
    AddressClass cls = t.addressClass != null ? t.addressClass : HostClassifier.classify(h).orElse(null);
    boolean inRole = role.allows(h, port);
    List<Risk> risks = new ArrayList<>();
    boolean proposed = true;
    if (cls != null && NEVER.contains(cls)) {
      proposed = false;
      risks.add(new Risk("sensitive-address", "a " + cls.wireName() + " address: never proposed"));
    } else if (cls == AddressClass.PRIVATE || cls == AddressClass.CGNAT) {
      risks.add(new Risk("internal-address", "an internal (" + cls.wireName() + ") address: make sure the task needs"
          + " this service, and no other on that network"));
    }
    if (!HostClassifier.isIpLiteral(h) && !NAME.matcher(h).matches()) {
      proposed = false;
      risks.add(new Risk("not-a-name", "not a host name (a pattern, spaces or other characters a name cannot hold):"
          + " never proposed"));
    }
    if (KnownHosts.isOrUnder(h, KnownHosts.SHORTENERS)) {
      proposed = false;
      risks.add(new Risk("shortener", "a URL shortener: it leads anywhere, so it opens the whole wall"));
    }
    if (KnownHosts.isOrUnder(h, KnownHosts.PASTE_SITES)) {
      proposed = false;
      risks.add(new Risk("paste-site", "a paste, file-drop or request-catcher site: a place to leave data for anyone"));
    }
    if (proposed && HostClassifier.isIpLiteral(h)) {
      risks.add(new Risk("ip-literal", "an IP literal: what answers there can change hands; the sandbox's proxy"
          + " may also see the name the task used"));
    }
    long commands = t.commands.estimate();
    if (commands <= 1) {
      risks.add(new Risk("single-command", "asked for by a single command"));
    }
    for (String rule : t.alertRules) {
      String detector = detectorOf(policy, rule);
      if (ALARMING.contains(detector)) {
        proposed = false;
        risks.add(new Risk("alerted", "also drew a " + detector + " alert (rule " + rule + ")"));
      }
    }
    if (inRole) {
      risks.add(new Risk("in-role", "roles.yaml allows it already: the sandbox's own allowlist lags (config drift)"));
    }
    return new Host(t.target(), h, port, t.refusals, commands, t.tasks.estimate(), t.agents.estimate(),
        t.agentNames.stream().sorted().toList(), Instant.ofEpochMilli(t.firstSeen), Instant.ofEpochMilli(t.lastSeen),
        cls == null ? null : cls.wireName(), inRole, proposed, List.copyOf(risks));
  }

  /** The detector of the rule named {@code id} in the policy in force; its id when the policy has none of it. */
  private static String detectorOf(Policy policy, String id) {
    if (policy != null) {
      for (Rule r : policy.rules()) {
        if (r.id().equals(id)) {
          return r.detector().spec().name();
        }
      }
    }
    return id;
  }
}
