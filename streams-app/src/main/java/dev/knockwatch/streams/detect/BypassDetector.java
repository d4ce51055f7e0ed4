package dev.knockwatch.streams.detect;

import dev.knockwatch.streams.rules.Detector;
import dev.knockwatch.streams.rules.Grain;
import dev.knockwatch.events.AddressClass;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.HostClassifier;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.rules.Hit;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;
import org.apache.kafka.common.serialization.Serde;
import dev.knockwatch.streams.rules.Rule;
import dev.knockwatch.events.config.Key;
import dev.knockwatch.events.config.KeyValues;
import java.time.Duration;

/**
 * {@code bypass}: after the proxy said no, the same key tries another door within {@code within} —
 * a direct dial (strace connect refused with ENETUNREACH/EPERM to a non-loopback address, curl's
 * immediate connect failure), an IP literal, another port of the refused host, a SOCKS tunnel,
 * {@code --noproxy} (a name resolved outside the proxy), or a URL shortener. Its slice is the key's
 * last proxy refusal, kept {@code within} of stream time. A refusal of the same host and port within
 * {@link #REFRESH} of the one kept is not written again (a retry storm would otherwise write every
 * refusal), so {@code within} may count from up to that much earlier.
 */
public final class BypassDetector implements Detector.Stateful<BypassDetector.Settings, BypassDetector.ProxyRefusal> {

  static final Set<String> SHORTENERS = dev.knockwatch.events.KnownHosts.SHORTENERS;
  static final Duration REFRESH = Duration.ofSeconds(1);
  private static final Serde<ProxyRefusal> SERDE = new ProxyRefusalSerde();

  /** A key's last proxy refusal. */
  public record ProxyRefusal(long atMs, String host, Integer port) {}

  public static final Duration DEFAULT_WITHIN = Duration.ofMinutes(2);

  static final Key<Duration> WITHIN = Key.duration("within", DEFAULT_WITHIN, false,
      "how soon after a proxy refusal another door counts");

  public record Settings(Duration within) implements Detector.Settings {}

  @Override
  public Spec spec() {
    return Spec.of("bypass", "after the proxy refused a name, another door within `within`: a direct dial, an IP"
        + " literal, another port, a SOCKS tunnel, a name resolved outside the proxy, a URL shortener", WITHIN,
        Grain.PER);
  }

  @Override
  public Settings settings(KeyValues v) {
    return new Settings(v.get(WITHIN));
  }

  @Override
  public String describe(Settings s) {
    return spec().name() + " within " + Key.human(s.within());
  }

  @Override
  public Serde<ProxyRefusal> serde() {
    return SERDE;
  }

  /** A proxy refusal older than within can no longer make a bypass. */
  @Override
  public long expiresAt(Rule rule, Settings s, ProxyRefusal slice) {
    return slice.atMs() + s.within().toMillis() + 1;
  }

  @Override
  public Duration sweepEvery() {
    return Duration.ofSeconds(10);
  }

  @Override
  public ProxyRefusal step(Rule rule, Settings s, Seen seen, ProxyRefusal before, Consumer<Hit> hits) {
    ViolationEvent e = seen.event();
    if (e.kind() != Kind.NETWORK) {
      return before;
    }
    long ts = seen.at();
    String door = before == null || ts - before.atMs() > s.within().toMillis() || ts < before.atMs()
        ? null : door(e, before);
    if (door != null) {
      Instant at = Instant.ofEpochMilli(ts);
      String summary = "after the proxy refused " + target(before.host(), before.port()) + ", the "
          + rule.nounOf(seen.key(), e) + " tried " + door + " " + (ts - before.atMs()) / 1000 + " s later";
      hits.accept(new Hit(rule, Alert.fingerprintOf(rule.id(), seen.key()), rule.commandOf(seen.key(), e), e.agentId(),
          seen.role(), e.host(), e.port(), e.source(), Instant.ofEpochMilli(before.atMs()), at,
          e.eventId() == null ? List.of() : List.of(e.eventId()), 1, null, null, summary, null));
    }
    return isProxyRefusal(e) && !repeats(before, e, ts) ? new ProxyRefusal(ts, e.host(), e.port()) : before;
  }

  /** The refusal kept already, of the same host and port, less than {@link #REFRESH} before. */
  private static boolean repeats(ProxyRefusal before, ViolationEvent e, long ts) {
    return before != null && ts >= before.atMs() && ts - before.atMs() < REFRESH.toMillis()
        && e.host().equals(before.host()) && Objects.equals(e.port(), before.port());
  }

  /**
   * A refusal by a proxy of a name (the first "no"): a request it refused ({@code http-request},
   * {@code http-connect}), or srt's record of an outbound connection its proxy refused
   * ({@code network-outbound}), whichever log saw it.
   */
  static boolean isProxyRefusal(ViolationEvent e) {
    if (e.host() == null || isIpLiteral(e.host()) || SHORTENERS.contains(e.host())) {
      return false;
    }
    String a = e.action() == null ? "" : e.action();
    return a.equals("http-request") || a.equals("http-connect") || a.equals("network-outbound");
  }

  /**
   * A dial around the proxy, refused below it: a network {@code connect} that asked no proxy (no
   * {@code CONNECT} method), refused by the network with ENETUNREACH or EPERM (a traced call, to
   * another than a loopback address), or by the client's word alone (curl's immediate connect
   * failure, "Couldn't connect to server"), which names no errno.
   */
  static boolean isDirectDial(ViolationEvent e) {
    if (e.kind() != Kind.NETWORK || !"connect".equals(e.action()) || e.method() != null) {
      return false;
    }
    return e.errno() == null || (("ENETUNREACH".equals(e.errno()) || "EPERM".equals(e.errno())) && e.host() != null
        && HostClassifier.classify(e.host()).orElse(null) != AddressClass.LOOPBACK);
  }

  /** Which other door {@code e} is, after {@code before}; null when it is none. */
  static String door(ViolationEvent e, ProxyRefusal before) {
    String a = e.action() == null ? "" : e.action();
    String host = e.host();
    if (isDirectDial(e)) {
      return "a direct dial to " + target(host, e.port());
    }
    if (a.equals("socks-tunnel")) {
      return "a SOCKS tunnel to " + target(host, e.port());
    }
    if (a.equals("dns")) {
      return "a direct name lookup of " + host + " (--noproxy)";
    }
    if (host == null) {
      return null;
    }
    if (SHORTENERS.contains(host)) {
      return "a URL shortener (" + host + ")";
    }
    if (isIpLiteral(host) && !isIpLiteral(before.host())
        && HostClassifier.classify(host).orElse(null) != AddressClass.LOOPBACK) {
      return "the IP literal " + target(host, e.port());
    }
    if (host.equals(before.host()) && e.port() != null && before.port() != null && !e.port().equals(before.port())) {
      return "another port of " + host + " (" + e.port() + " after " + before.port() + ")";
    }
    return null;
  }

  private static boolean isIpLiteral(String host) {
    // hosts arrive canonical: a v4 literal is dotted decimal, a v6 one holds colons
    return host != null && (host.indexOf(':') >= 0 || host.chars().allMatch(c -> (c >= '0' && c <= '9') || c == '.'));
  }

  private static String target(String host, Integer port) {
    return port == null ? host : host + ":" + port;
  }
}
