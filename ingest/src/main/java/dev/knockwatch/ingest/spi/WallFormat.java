package dev.knockwatch.ingest.spi;

import dev.knockwatch.events.config.Key;

/**
 * A format of a wall that names no command (a firewall, an egress proxy, a cluster's network
 * policy, a sandbox's audit log): its shared log is chosen by the source's {@code type} alone, and
 * who it refused is the agent its source's {@code agents:} map (docs/ARCHITECTURE.md, "Events that
 * name no command").
 */
public interface WallFormat extends SourceFormat {

  @Override
  default Choice choice() {
    return Choice.byTypeOnly();
  }

  @Override
  default boolean perCommand() {
    return false;
  }

  /** The source's {@code agents:} mapping; none (every identity unmapped) where it gave none. */
  static Identities agents(FileOptions options, Key<Identities> key) {
    Identities agents = options.get(key);
    return agents == null ? Identities.none() : agents;
  }
}
