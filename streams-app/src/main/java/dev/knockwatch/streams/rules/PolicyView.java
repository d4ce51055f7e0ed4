package dev.knockwatch.streams.rules;

import dev.knockwatch.events.config.ConfigException;
import java.util.function.LongSupplier;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The policy a processor judges by: the one published on {@code knockwatch.policy} (read from the
 * global store, so every instance sees the same version), else the one the topology was built
 * from. The roles, the agents' globs and the default role follow the published policy at once;
 * the rules are the topology's own (a rules change takes a restart, which {@code up} does). The
 * store is looked at most once a second; a published policy that does not load is ignored. Each
 * version is logged once per process, in use or not.
 */
public final class PolicyView {

  public static final String STORE = "policy-global";
  private static final Logger log = LoggerFactory.getLogger(PolicyView.class);
  private static final long CHECK_EVERY_MS = 1000;
  /**
   * The versions already logged by this process: every processor of every task has a view, and
   * each one sees the same version arrive.
   */
  private static final java.util.Set<String> SAID = java.util.concurrent.ConcurrentHashMap.newKeySet();

  private final Policy built;
  private final ReadOnlyKeyValueStore<String, PolicyFiles> store;
  private final LongSupplier clock;
  private Policy current;
  private String lastSeenVersion;
  private long checkedAt = Long.MIN_VALUE / 2; // "long ago", without overflowing now - checkedAt

  public PolicyView(Policy built, ReadOnlyKeyValueStore<String, PolicyFiles> store, LongSupplier clock) {
    this.built = built;
    this.store = store;
    this.clock = clock;
    this.current = built;
  }

  /** The view for a processor of the detection topology (the global store is there when the topology has it). */
  public static PolicyView of(Policy built, ProcessorContext<?, ?> context) {
    ReadOnlyKeyValueStore<String, PolicyFiles> store;
    try {
      store = context.getStateStore(STORE);
    } catch (RuntimeException e) {
      store = null; // a topology without the policy topic (tests of one processor)
    }
    return new PolicyView(built, store, System::currentTimeMillis);
  }

  /** Roles already worked out, for {@link #roleOf}: the globs are matched once per agent, not per refusal. */
  private final java.util.Map<String, String> roles = new java.util.HashMap<>();
  private Policy rolesOf;

  /** The role of {@code agentId} under the current policy (a processor's view: not thread-safe). */
  public String roleOf(String agentId) {
    Policy p = current();
    if (p != rolesOf) {
      roles.clear();
      rolesOf = p;
    }
    if (agentId == null) {
      return p.roleOf(null);
    }
    String role = roles.get(agentId);
    if (role == null) {
      role = p.roleOf(agentId);
      if (roles.size() >= 10_000) {
        roles.clear(); // bounded: agents are many only under a flood
      }
      roles.put(agentId, role);
    }
    return role;
  }

  public Policy current() {
    long now = clock.getAsLong();
    if (store != null && now - checkedAt >= CHECK_EVERY_MS) {
      checkedAt = now;
      PolicyFiles files = store.get(PolicyFiles.KEY);
      if (files != null && !files.version().equals(lastSeenVersion)) {
        lastSeenVersion = files.version();
        try {
          Policy published = PolicyLoader.load(files, "knockwatch.policy");
          current = new Policy(published.version(), published.roles(), published.agents(), published.defaultRole(),
              built.rules());
          if (SAID.add(files.version())) {
            log.info("policy {} from knockwatch.policy in use (roles {})", current.version(), current.roles().keySet());
          }
        } catch (ConfigException e) {
          if (SAID.add(files.version())) {
            log.error("policy {} on knockwatch.policy does not load; keeping policy {}:\n{}", files.version(),
                current.version(), e.getMessage());
          }
        }
      }
    }
    return current;
  }
}
