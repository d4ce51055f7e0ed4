package dev.knockwatch.streams.detect;

import dev.knockwatch.events.Kind;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.metrics.StreamsMetrics;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.streams.processor.PunctuationType;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * The same refusal seen by two logs (srt's record and the proxy's 403 or a Squid line: same
 * command, host, port and door — the proxy, or the same other way out — within
 * {@link #WINDOW}) is counted once: the first goes on to the detectors, a later one from another
 * source goes only to {@code notesChild}, which adds its source to the command's alerts.
 *
 * <p>The store (in memory, with its changelog) holds, per command, host, port and door, when
 * each source last saw it ({@code srt-violation=1764441932887;squid=1764441933010}). A sighting
 * within {@link #REFRESH} of the source's last one is not written again (a retry storm would
 * otherwise write every refusal), so the two-second match may fall short by up to that much.
 * Entries not seen for {@link #RETENTION} of stream time are dropped every ten seconds. The
 * processor reads and writes the store through a {@link WriteThroughCopy}.
 *
 * <p>A packet or connection refusal that names its connection ({@link #connection}: a firewall's
 * log line, a Hubble flow) is one attempt with the kernel's resending of it and with another
 * layer's record of the same packets ({@link #attemptSeen}): the SYNs a pod's dial sends while
 * Cilium drops them, and the node's nftables logging the same packets, count once. A new dial is
 * a new source port, and counts.
 *
 * <p>A command holds at most {@value #MAX_PER_COMMAND} entries (docs/RELIABILITY.md): past that
 * (a scan of distinct hosts), a new host's refusal is not remembered and a second log's copy of
 * it counts again — more counts for a command that is flooding anyway, never a refusal lost.
 */
public final class CrossSourceDedupProcessor implements Processor<String, ViolationEvent, String, ViolationEvent> {

  public static final Duration WINDOW = Duration.ofSeconds(2);
  public static final Duration RETENTION = Duration.ofMinutes(1);
  static final Duration REFRESH = Duration.ofSeconds(1);
  public static final int MAX_PER_COMMAND = 1000;
  /**
   * A connection's attempt: the kernel sends a dropped SYN again after 1 s (its first RTO), then 1
   * or 2, 4, … 32 s later ({@code tcp_syn_linear_timeouts}, {@code tcp_syn_retries} 6: seven
   * SYNs in 63 s, given up at 127 s); each is refused again. Sightings less than {@code RESEND_GAP}
   * apart are a flood, not the kernel's resending.
   */
  static final Duration RESEND_GAP = Duration.ofMillis(800);
  /**
   * One layer's two records of one packet: Hubble's policy-verdict event and the drop notification
   * of the same packet, when both are on. They count toward {@link #RESENDS} as resendings do.
   */
  static final Duration SAME_PACKET = Duration.ofMillis(50);
  static final int RESENDS = 7;
  static final Duration ATTEMPT_SPAN = Duration.ofSeconds(130);

  private final String storeName;
  private final List<String> detectorChildren;
  private final String notesChild;
  private ProcessorContext<String, ViolationEvent> context;
  private WriteThroughCopy<String> sightings;
  /** How many entries each command holds in {@link #sightings}. */
  private final Map<String, Integer> perCommand = new java.util.HashMap<>();

  public CrossSourceDedupProcessor(String storeName, List<String> detectorChildren, String notesChild) {
    this.storeName = storeName;
    this.detectorChildren = List.copyOf(detectorChildren);
    this.notesChild = notesChild;
  }

  @Override
  public void init(ProcessorContext<String, ViolationEvent> context) {
    this.context = context;
    KeyValueStore<String, String> held = context.getStateStore(storeName);
    this.sightings = new WriteThroughCopy<>(held, CrossSourceDedupProcessor::latest);
    perCommand.clear();
    sightings.keys().forEach(k -> perCommand.merge(commandOf(k), 1, Integer::sum));
    context.schedule(Duration.ofSeconds(10), PunctuationType.STREAM_TIME,
        streamTime -> sightings.expireBefore(streamTime - RETENTION.toMillis(),
            k -> perCommand.computeIfPresent(commandOf(k), (c, n) -> n == 1 ? null : n - 1)));
  }

  @Override
  public void process(Record<String, ViolationEvent> record) {
    ViolationEvent e = record.value();
    if (record.key() == null || e == null) {
      return;
    }
    String connection = connection(e);
    if (connection != null && e.source() != null && !attemptSeen(record, record.key() + "|" + connection, e.source())) {
      return;
    }
    if (e.host() != null && e.source() != null) {
      String door = BypassDetector.isProxyRefusal(e) ? "proxy" : String.valueOf(e.action());
      String key = record.key() + "|" + e.host() + "|" + e.port() + "|" + door;
      long ts = record.timestamp();
      String source = e.source();
      Map<String, Long> seen = decode(sightings.get(key));
      boolean seenElsewhere = false;
      for (Map.Entry<String, Long> s : seen.entrySet()) {
        if (!s.getKey().equals(source) && Math.abs(ts - s.getValue()) <= WINDOW.toMillis()) {
          seenElsewhere = true;
        }
      }
      if (seenElsewhere) {
        StreamsMetrics.DUPLICATES.labels(source).inc();
        context.forward(record, notesChild);
        return;
      }
      Long mine = seen.get(source);
      if (seen.isEmpty() && perCommand.getOrDefault(record.key(), 0) >= MAX_PER_COMMAND) {
        StreamsMetrics.STATE_CAPPED.labels("cross-source-dedup").inc();
      } else if (mine == null || ts - mine >= REFRESH.toMillis() || ts < mine) {
        if (seen.isEmpty()) {
          perCommand.merge(record.key(), 1, Integer::sum);
        }
        seen.put(source, Math.max(ts, mine == null ? ts : mine));
        sightings.put(key, encode(seen));
      }
    }
    for (String child : detectorChildren) {
      context.forward(record, child);
    }
  }

  /**
   * Whether this sighting of a connection is a new attempt (true: on to the detectors); one the
   * attempt already holds goes to the notes. Another layer's sighting of the connection within
   * {@link #WINDOW} is the same packet; the same layer's next one is the kernel resending the SYN
   * while it is at least {@link #RESEND_GAP} after the last (or the same packet told twice, within
   * {@link #SAME_PACKET}), the attempt has fewer than {@link #RESENDS} and began at most
   * {@link #ATTEMPT_SPAN} ago. So an agent that dials again and again from one source port it binds
   * counts once per {@value #RESENDS} dials at the most, never for another destination, and every
   * dial is in the timeline.
   */
  private boolean attemptSeen(Record<String, ViolationEvent> record, String key, String source) {
    long ts = record.timestamp();
    Map<String, long[]> attempts = attempts(sightings.get(key));
    if (attempts.isEmpty() && perCommand.getOrDefault(record.key(), 0) >= MAX_PER_COMMAND) {
      StreamsMetrics.STATE_CAPPED.labels("cross-source-dedup").inc();
      return true;
    }
    boolean otherLayer = attempts.entrySet().stream()
        .anyMatch(a -> !a.getKey().equals(source) && Math.abs(ts - a.getValue()[1]) <= WINDOW.toMillis());
    long[] mine = attempts.get(source); // first, last, sightings
    // the kernel's resending, or the same packet told twice (Hubble's policy verdict and its drop)
    boolean resent = mine != null && (ts - mine[1] >= RESEND_GAP.toMillis() || Math.abs(ts - mine[1]) <= SAME_PACKET.toMillis())
        && mine[2] < RESENDS && ts - mine[0] <= ATTEMPT_SPAN.toMillis();
    long[] next = resent ? new long[] {mine[0], Math.max(ts, mine[1]), mine[2] + 1}
        : otherLayer && mine != null && ts - mine[0] <= ATTEMPT_SPAN.toMillis() ? mine
        : new long[] {ts, ts, 1};
    if (attempts.isEmpty()) {
      perCommand.merge(record.key(), 1, Integer::sum);
    }
    if (next != mine) {
      attempts.put(source, next);
      sightings.put(key, encodeAttempts(attempts));
    }
    if (otherLayer || resent) {
      StreamsMetrics.DUPLICATES.labels(source).inc();
      context.forward(record, notesChild);
      return false;
    }
    return true;
  }

  /** Each layer's attempt of a connection: {@code hubble=LAST@FIRST#SIGHTINGS;netfilter=…}. */
  static Map<String, long[]> attempts(String value) {
    Map<String, long[]> out = new LinkedHashMap<>();
    if (value != null && !value.isEmpty()) {
      for (String part : value.split(";")) {
        int eq = part.indexOf('=');
        int at = part.indexOf('@');
        int hash = part.indexOf('#');
        if (eq > 0 && at > eq && hash > at) {
          try {
            out.put(part.substring(0, eq), new long[] {Long.parseLong(part.substring(at + 1, hash)),
                Long.parseLong(part.substring(eq + 1, at)), Long.parseLong(part.substring(hash + 1))});
          } catch (NumberFormatException ignored) {
            // a damaged entry counts as not seen
          }
        }
      }
    }
    return out;
  }

  static String encodeAttempts(Map<String, long[]> attempts) {
    StringBuilder b = new StringBuilder();
    attempts.forEach((s, a) -> b.append(b.length() == 0 ? "" : ";").append(s).append('=').append(a[1]).append('@')
        .append(a[0]).append('#').append(a[2]));
    return b.toString();
  }

  /**
   * The connection a packet or connection refusal names ({@code conn|tcp|10.0.1.5|40312|93.184.215.14|443}):
   * its protocol, source address and port, destination and destination port, as the layer names
   * the destination (Hubble names what Cilium's DNS proxy resolved where it did, nftables the
   * address: two such records of one packet are two). Null for an event that is no such refusal:
   * a proxy's request (a method or a URL: one connection carries many requests, each its own
   * attempt), one without a source port or destination.
   */
  static String connection(ViolationEvent e) {
    if (e.kind() != Kind.NETWORK || e.sourceAddress() == null || e.sourcePort() == null || e.host() == null
        || e.method() != null || e.url() != null || e.protocol() == null) {
      return null;
    }
    return switch (e.protocol()) {
      case "tcp", "udp", "sctp" -> "conn|" + e.protocol() + "|" + e.sourceAddress() + "|" + e.sourcePort() + "|"
          + e.host() + "|" + e.port();
      default -> null;
    };
  }

  private static String commandOf(String key) {
    int bar = key.indexOf('|');
    return bar < 0 ? key : key.substring(0, bar);
  }

  /** When any source last saw the refusal a stored value describes. */
  private static long latest(String value) {
    return decode(value).values().stream().mapToLong(Long::longValue).max().orElse(0);
  }

  static Map<String, Long> decode(String value) {
    Map<String, Long> out = new LinkedHashMap<>();
    if (value != null && !value.isEmpty()) {
      for (String part : value.split(";")) {
        int eq = part.indexOf('=');
        if (eq > 0) {
          try {
            int at = part.indexOf('@', eq); // a connection's attempt: LAST@FIRST#SIGHTINGS
            out.put(part.substring(0, eq), Long.parseLong(part.substring(eq + 1, at < 0 ? part.length() : at)));
          } catch (NumberFormatException ignored) {
            // a damaged entry counts as not seen
          }
        }
      }
    }
    return out;
  }

  static String encode(Map<String, Long> seen) {
    StringBuilder b = new StringBuilder();
    seen.forEach((s, t) -> b.append(b.length() == 0 ? "" : ";").append(s).append('=').append(t));
    return b.toString();
  }
}
