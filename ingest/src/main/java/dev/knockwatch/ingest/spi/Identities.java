package dev.knockwatch.ingest.spi;

import dev.knockwatch.events.AgentId;
import dev.knockwatch.events.Glob;
import dev.knockwatch.events.config.Key;
import dev.knockwatch.events.config.YamlNode;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A source's {@code agents:} list: what a wall that names no command knows of whom it refused (a
 * UID, a source address, its rule's log prefix, a sandbox, a pod) mapped to the agent it is, as
 * the operator declares it (docs/TRUST.md: this mapping stands for the log layout). First match
 * wins; an entry matches when every attribute it names matches:
 * <pre>
 * agents:
 *   - uid: "65534"              # exact
 *     agent: ci-runner-1
 *   - source: 10.0.3.0/24       # an address attribute: an address or a CIDR block
 *     agent: build-farm
 *   - prefix: "agent-*"         # a glob
 *     agent: sandbox-fleet
 * </pre>
 * The attributes an entry may name are the wall's ({@link #key}); which of them are addresses too.
 */
public final class Identities {

  /** One entry: the attributes it names, each with its test, and the agent. */
  record Entry(Map<String, Test> when, String agent) {}

  /** One attribute's test: an exact value, a glob, or a CIDR block. */
  private interface Test {
    boolean matches(String value);
  }

  private final List<Entry> entries;

  private Identities(List<Entry> entries) {
    this.entries = List.copyOf(entries);
  }

  /** No mapping: every identity is unmapped. */
  public static Identities none() {
    return new Identities(List.of());
  }

  /**
   * The {@code agents} key of a wall whose records carry {@code attributes}; those of them in
   * {@code addresses} may be matched by a CIDR block. Required: a wall that names no command has no
   * agent without it.
   */
  public static Key<Identities> key(List<String> attributes, Set<String> addresses) {
    String names = String.join(", ", attributes);
    return Key.of("agents", "list of {ATTRIBUTE: value, ..., agent: AGENT}", null, "required",
        "which agent each identity the wall knows is (" + names + "; an address also as a CIDR block, any value as a"
            + " glob): first match wins", (node, where) -> read(node, where, attributes, addresses))
        .requiredAs("is missing: a source of a wall that names no command maps what it knows of who it refused"
            + " (" + names + ") to agents");
  }

  /** The agent {@code knows} is, by the first entry it matches; empty when none does. */
  public Optional<String> agentOf(Map<String, String> knows) {
    Map<String, List<String>> each = new LinkedHashMap<>();
    knows.forEach((k, v) -> each.put(k, List.of(v)));
    return agentOfAny(each);
  }

  /**
   * As {@link #agentOf}, for a wall that knows several values of an attribute (a pod's labels): an
   * entry's test of that attribute holds when one of its values passes it.
   */
  public Optional<String> agentOfAny(Map<String, List<String>> knows) {
    for (Entry e : entries) {
      boolean all = true;
      for (Map.Entry<String, Test> t : e.when().entrySet()) {
        List<String> values = knows.get(t.getKey());
        if (values == null || values.stream().noneMatch(t.getValue()::matches)) {
          all = false;
          break;
        }
      }
      if (all) {
        return Optional.of(e.agent());
      }
    }
    return Optional.empty();
  }

  private static Identities read(YamlNode node, String where, List<String> attributes, Set<String> addresses) {
    List<Entry> entries = new ArrayList<>();
    int n = 0;
    for (YamlNode item : node.list(where + ": agents")) {
      n++;
      String at = where + ": agents " + n;
      Map<String, Test> when = new LinkedHashMap<>();
      String agent = null;
      int before = item.file().problemCount();
      for (YamlNode.Entry kv : item.entries(at)) {
        String name = kv.name();
        String value = kv.value().string(at + ": " + name);
        if (value == null) {
          continue;
        }
        if (name.equals("agent")) {
          Optional<String> problem = AgentId.problem(value);
          if (problem.isPresent()) {
            kv.value().problem(at + ": agent \"" + value + "\" is no agent id: " + problem.get());
          } else {
            agent = value;
          }
        } else if (!attributes.contains(name)) {
          kv.key().problem(at + ": unknown attribute \"" + name + "\" (known: " + String.join(", ", attributes) + ", agent)");
        } else {
          Test test = test(value, addresses.contains(name));
          if (test == null) {
            kv.value().problem(at + ": " + name + " \"" + value + "\" is not an address or a CIDR block");
          } else {
            when.put(name, test);
          }
        }
      }
      if (item.file().problemCount() > before || !item.isMapping()) {
        continue; // one problem an entry: the first says what to mend
      }
      if (agent == null) {
        item.problem(at + ": names no agent (agent: AGENT)");
      } else if (when.isEmpty()) {
        item.problem(at + ": names none of " + String.join(", ", attributes) + ": it would match everything");
      } else {
        entries.add(new Entry(when, agent));
      }
    }
    return new Identities(entries);
  }

  /** The test a configured value stands for; null when an address attribute's value is no address or block. */
  private static Test test(String value, boolean address) {
    if (address && value.indexOf('/') > 0) {
      return Cidr.of(value);
    }
    if (value.indexOf('*') >= 0 || value.indexOf('?') >= 0) {
      Glob glob = Glob.of(value);
      return glob::matches;
    }
    if (address) {
      return Cidr.of(value + (value.indexOf(':') >= 0 ? "/128" : "/32"));
    }
    return value::equals;
  }

  /** An address block, compared byte by byte; its own address normalised (so {@code ::1} matches its full form). */
  private record Cidr(byte[] network, int bits) implements Test {

    static Cidr of(String text) {
      int slash = text.indexOf('/');
      try {
        byte[] address = literal(text.substring(0, slash));
        int bits = Integer.parseInt(text.substring(slash + 1));
        return address == null || bits < 0 || bits > address.length * 8 ? null : new Cidr(address, bits);
      } catch (NumberFormatException e) {
        return null;
      }
    }

    @Override
    public boolean matches(String value) {
      byte[] a = literal(value);
      if (a == null || a.length != network.length) {
        return false;
      }
      for (int i = 0; i < bits; i++) {
        int mask = 0x80 >>> (i % 8);
        if ((a[i / 8] & mask) != (network[i / 8] & mask)) {
          return false;
        }
      }
      return true;
    }

    /** An IP literal's bytes; null for anything else (a name is never resolved). */
    private static byte[] literal(String text) {
      boolean v6 = text.indexOf(':') >= 0;
      if (!(v6 ? text.matches("[0-9A-Fa-f:.]{2,45}") : text.matches("[0-9]{1,3}(\\.[0-9]{1,3}){3}"))) {
        return null;
      }
      try {
        return InetAddress.getByName(text).getAddress();
      } catch (UnknownHostException e) {
        return null;
      }
    }
  }
}
