package dev.knockwatch.streams.detect;

import dev.knockwatch.events.AddressClass;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.HostClassifier;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Source;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.lifecycle.Hit;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.Rule;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;

/**
 * {@code bypass}: after the proxy said no, the same command tries another door within
 * {@code within} — a direct dial (strace connect refused with ENETUNREACH/EPERM to a
 * non-loopback address, curl's immediate connect failure), an IP literal, another port of the
 * refused host, a SOCKS tunnel, {@code --noproxy} (a name resolved outside the proxy), or a URL
 * shortener. The store (in memory, with its changelog) keeps each command's last proxy refusal,
 * for {@code within} of stream time, and the processor a {@link WriteThroughCopy} of it. A refusal
 * of the same host and port within {@link #REFRESH} of the one stored is not written again (a
 * retry storm would otherwise write every refusal), so {@code within} may count from up to that
 * much earlier.
 */
public final class BypassProcessor extends RuleProcessor {

  static final Set<String> SHORTENERS = HostClassifier.SHORTENERS;

  static final Duration REFRESH = Duration.ofSeconds(1);

  /** A command's last proxy refusal. */
  public record ProxyRefusal(long atMs, String host, Integer port) {}

  private static final Serde<ProxyRefusal> SERDE = new ProxyRefusalSerde();

  private final Duration within;
  private final String storeName;
  private WriteThroughCopy<ProxyRefusal> refusals;

  public BypassProcessor(Rule rule, Duration within, Policy policy, String storeName) {
    super(rule, policy);
    this.within = within;
    this.storeName = storeName;
  }

  /** Its store: each key's last proxy refusal, in memory with its changelog. */
  public static StoreBuilder<KeyValueStore<String, ProxyRefusal>> store(String name) {
    return Stores.keyValueStoreBuilder(Stores.inMemoryKeyValueStore(name), Serdes.String(), SERDE);
  }

  @Override
  protected void start() {
    KeyValueStore<String, ProxyRefusal> store = context.getStateStore(storeName);
    this.refusals = new WriteThroughCopy<>(store, ProxyRefusal::atMs);
    // a proxy refusal older than within can no longer make a bypass: drop it
    context.schedule(Duration.ofSeconds(10), PunctuationType.STREAM_TIME,
        streamTime -> refusals.expireBefore(streamTime - within.toMillis()));
  }

  @Override
  protected boolean reads(ViolationEvent e) {
    return e.kind() == Kind.NETWORK;
  }

  @Override
  protected void judge(Record<String, ViolationEvent> record, String commandId, ViolationEvent e, String role) {
    long ts = record.timestamp();
    ProxyRefusal before = refusals.get(commandId);
    String door = before == null || ts - before.atMs() > within.toMillis() || ts < before.atMs()
        ? null : door(e, before);
    if (door != null) {
      Instant at = Instant.ofEpochMilli(ts);
      String summary = "after the proxy refused " + target(before.host(), before.port()) + ", the " + rule.nounOf(commandId, e) + " tried "
          + door + " " + (ts - before.atMs()) / 1000 + " s later";
      context.forward(new Record<>(commandId, new Hit(rule, Alert.fingerprintOf(rule.id(), commandId),
          rule.commandOf(commandId, e), e.agentId(), role, e.host(), e.port(), e.source(), Instant.ofEpochMilli(before.atMs()), at,
          e.eventId() == null ? List.of() : List.of(e.eventId()), 1, null, null, summary, null), ts));
    }
    if (isProxyRefusal(e) && !repeats(before, e, ts)) {
      refusals.put(commandId, new ProxyRefusal(ts, e.host(), e.port()));
    }
  }

  /** The refusal stored already, of the same host and port, less than {@link #REFRESH} before. */
  private static boolean repeats(ProxyRefusal before, ViolationEvent e, long ts) {
    return before != null && ts >= before.atMs() && ts - before.atMs() < REFRESH.toMillis()
        && e.host().equals(before.host()) && Objects.equals(e.port(), before.port());
  }

  /** A refusal by the proxy of a name (the first "no"). */
  static boolean isProxyRefusal(ViolationEvent e) {
    if (e.host() == null || isIpLiteral(e.host()) || SHORTENERS.contains(e.host())) {
      return false;
    }
    if (e.source() == Source.SQUID || e.source() == Source.JSON) {
      return true;
    }
    String a = e.action() == null ? "" : e.action();
    return ((e.source() == Source.PROXY_403 || e.source() == Source.CLAUDE_CODE)
            && (a.equals("http-request") || a.equals("http-connect")))
        || (e.source() == Source.CLAUDE_CODE && a.equals("network-outbound"))
        || (e.source() == Source.SRT_VIOLATION && (a.equals("network-outbound") || a.equals("http-request")));
  }

  /** Which other door {@code e} is, after {@code before}; null when it is none. */
  static String door(ViolationEvent e, ProxyRefusal before) {
    String a = e.action() == null ? "" : e.action();
    String host = e.host();
    if (e.source() == Source.STRACE && "connect".equals(e.syscall())
        && ("ENETUNREACH".equals(e.errno()) || "EPERM".equals(e.errno())) && host != null
        && HostClassifier.classify(host).orElse(null) != AddressClass.LOOPBACK) {
      return "a direct dial to " + target(host, e.port());
    }
    if ((e.source() == Source.PROXY_403 && a.equals("connect") && e.reason() != null
        && e.reason().contains("Network is unreachable")) || (e.source() == Source.CLAUDE_CODE && a.equals("connect"))) {
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
