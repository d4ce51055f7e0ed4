package dev.knockwatch.probes.limit;

import dev.knockwatch.events.HostClassifier;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * A controlled pattern of refusals: how many commands, which agents and hosts, how fast.
 *
 * @param pattern steady (evenly spaced), burst (each second's attempts back to back at the start
 *     of the second) or slow (every command spaced so it stays under {@code under} attempts per
 *     {@code window})
 * @param rate attempts per second over all commands; 0 for as fast as possible (steady, burst)
 * @param duration how long to go on
 * @param maxAttempts stop after this many attempts (0: no limit)
 * @param commands how many commands retry at once (each gets a fresh command id)
 * @param hosts host:port targets; command i knocks on hosts[i mod n]
 * @param agents agent ids; command i runs as agents[i mod n] (mix roles by mixing agents)
 * @param window slow: the detection window to stay under
 * @param under slow: attempts per command and window, kept below the threshold
 */
public record LimitPlan(Pattern pattern, double rate, Duration duration, long maxAttempts, int commands,
    List<String> hosts, List<String> agents, Duration window, int under) {

  public static final String DEFAULT_AGENT = dev.knockwatch.events.ProbeAgents.LIMIT;
  private static final java.util.regex.Pattern HOST_PORT =
      java.util.regex.Pattern.compile("([A-Za-z0-9-]+(\\.[A-Za-z0-9-]+)*\\.?|\\[[0-9A-Fa-f:.]+\\]):[0-9]{1,5}");

  /** The shapes of traffic. */
  public enum Pattern {
    STEADY, BURST, SLOW;

    public static Pattern of(String name) {
      try {
        return valueOf(name.toUpperCase(Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("pattern \"" + name + "\" is not one of steady, burst, slow");
      }
    }
  }

  public LimitPlan {
    if (commands < 1) {
      throw new IllegalArgumentException("commands must be at least 1, not " + commands);
    }
    if (rate < 0 || Double.isNaN(rate)) {
      throw new IllegalArgumentException("rate must be 0 (as fast as possible) or more, not " + rate);
    }
    if (duration.isNegative()) {
      throw new IllegalArgumentException("duration must not be negative");
    }
    if (hosts.isEmpty() || agents.isEmpty()) {
      throw new IllegalArgumentException("give at least one host and one agent");
    }
    for (String h : hosts) {
      // the host goes into a shell command and a JSON line: names, IPv4 and bracketed IPv6 only
      if (!HOST_PORT.matcher(h).matches() || HostClassifier.target(h).map(t -> t.port() == null).orElse(true)) {
        throw new IllegalArgumentException("host \"" + h + "\" is not host:port");
      }
    }
    for (String a : agents) {
      if (!a.matches("[A-Za-z0-9._-]{1,128}")) {
        throw new IllegalArgumentException("agent \"" + a + "\" is not 1-128 of [A-Za-z0-9._-]");
      }
    }
    if (pattern == Pattern.SLOW && (under < 1 || window.isZero() || window.isNegative())) {
      throw new IllegalArgumentException("slow needs a window and at least 1 attempt under it");
    }
    hosts = List.copyOf(hosts);
    agents = List.copyOf(agents);
  }

  /** The gentle demo of {@code up}: one command that knocks {@code attempts} times, 1 s apart. */
  public static LimitPlan demo(String host, int attempts) {
    return new LimitPlan(Pattern.STEADY, 1, Duration.ofSeconds(attempts), attempts, 1, List.of(host),
        List.of(DEFAULT_AGENT), Duration.ofMinutes(5), 4);
  }

  /** The URL an agent would type for a validated host:port: the scheme's own port left out. */
  static String url(String target) {
    int colon = target.lastIndexOf(':');
    String host = target.substring(0, colon);
    String port = target.substring(colon + 1);
    return port.equals("443") ? "https://" + host : port.equals("80") ? "http://" + host : "https://" + target + "/";
  }

  /** Seconds between two attempts of one command, for slow. */
  double slowInterval() {
    return window.toNanos() / 1e9 / under;
  }
}
