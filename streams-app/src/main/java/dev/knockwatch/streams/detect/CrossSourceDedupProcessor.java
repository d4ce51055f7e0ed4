package dev.knockwatch.streams.detect;

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
 * <p>A command holds at most {@value #MAX_PER_COMMAND} entries (docs/RELIABILITY.md): past that
 * (a scan of distinct hosts), a new host's refusal is not remembered and a second log's copy of
 * it counts again — more counts for a command that is flooding anyway, never a refusal lost.
 */
public final class CrossSourceDedupProcessor implements Processor<String, ViolationEvent, String, ViolationEvent> {

  public static final Duration WINDOW = Duration.ofSeconds(2);
  public static final Duration RETENTION = Duration.ofMinutes(1);
  static final Duration REFRESH = Duration.ofSeconds(1);
  public static final int MAX_PER_COMMAND = 1000;

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
            out.put(part.substring(0, eq), Long.parseLong(part.substring(eq + 1)));
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
