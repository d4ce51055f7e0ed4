package dev.knockwatch.streams.rules;

import dev.knockwatch.events.HostClassifier;
import java.util.List;

/** A role of {@code roles.yaml}: the hosts its agents may reach. */
public record Role(String name, List<HostPattern> hosts) {

  /** True when the role's allowlist covers {@code host} (canonical) on {@code port} (null: any). */
  public boolean allows(String host, Integer port) {
    if (host == null) {
      return false;
    }
    for (HostPattern p : hosts) {
      if (p.matches(host, port)) {
        return true;
      }
    }
    return false;
  }

  /**
   * One allowlist entry: {@code registry.npmjs.org}, {@code *.maven.org} (any name below
   * maven.org, not maven.org itself, as srt's own allowlist reads it), with an optional
   * {@code :port}.
   */
  public record HostPattern(String text, String host, boolean subdomains, Integer port) {

    /** Null when {@code text} is no host pattern. */
    public static HostPattern parse(String text) {
      String t = text.strip();
      boolean sub = t.startsWith("*.");
      String rest = sub ? t.substring(2) : t;
      if (rest.isEmpty() || rest.contains("*")) {
        return null;
      }
      return HostClassifier.hostPort(rest)
          .filter(hp -> !hp.host().isEmpty())
          .map(hp -> new HostPattern(t, hp.host(), sub, hp.port()))
          .orElse(null);
    }

    boolean matches(String candidate, Integer candidatePort) {
      if (port != null && !port.equals(candidatePort)) {
        return false;
      }
      String h = HostClassifier.canonical(candidate);
      return subdomains ? h.endsWith("." + host) : h.equals(host);
    }
  }
}
