package dev.knockwatch.streams.detect;

import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.StreamsMetrics;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.state.WindowStore;
import org.apache.kafka.streams.state.WindowStoreIterator;

/**
 * The same refusal seen by two logs (srt's record and the proxy's 403 or a Squid line: same
 * command, host, port and door — the proxy, or the same other way out — within
 * {@link #WINDOW}) is counted once: the first goes on to the
 * detectors, a later one from another source goes only to {@code notesChild}, which adds its
 * source to the command's alerts. The window store (keyed by command, host, port and door) keeps
 * each sighting for a minute, so it stays small; a sighting within {@link #REFRESH} of one from
 * the same source is not written again (a retry storm would otherwise write every refusal), so
 * the two-second match may fall short by up to that much.
 */
public final class CrossSourceDedupProcessor implements Processor<String, ViolationEvent, String, ViolationEvent> {

  public static final Duration WINDOW = Duration.ofSeconds(2);
  public static final Duration RETENTION = Duration.ofMinutes(1);
  static final Duration REFRESH = Duration.ofSeconds(1);

  private final String storeName;
  private final List<String> detectorChildren;
  private final String notesChild;
  private ProcessorContext<String, ViolationEvent> context;
  private WindowStore<String, String> store;

  public CrossSourceDedupProcessor(String storeName, List<String> detectorChildren, String notesChild) {
    this.storeName = storeName;
    this.detectorChildren = List.copyOf(detectorChildren);
    this.notesChild = notesChild;
  }

  @Override
  public void init(ProcessorContext<String, ViolationEvent> context) {
    this.context = context;
    this.store = context.getStateStore(storeName);
  }

  @Override
  public void process(Record<String, ViolationEvent> record) {
    ViolationEvent e = record.value();
    if (record.key() == null || e == null) {
      return;
    }
    if (e.host() != null && e.source() != null) {
      // the same refusal: a proxy's no seen twice, or the same other door (a SOCKS tunnel, a dial) seen twice
      String door = BypassProcessor.isProxyRefusal(e) ? "proxy" : String.valueOf(e.action());
      String key = record.key() + "|" + e.host() + "|" + e.port() + "|" + door;
      long ts = record.timestamp();
      boolean seenElsewhere = false;
      boolean seenHereLately = false; // by this source within REFRESH: writing again changes (almost) nothing
      String source = e.source().wireName();
      try (WindowStoreIterator<String> it = store.fetch(key, ts - WINDOW.toMillis(), ts + WINDOW.toMillis())) {
        while (it.hasNext() && !seenElsewhere) {
          var kv = it.next();
          if (!kv.value.equals(source)) {
            seenElsewhere = true;
          } else if (kv.key >= ts - REFRESH.toMillis() && kv.key <= ts) {
            seenHereLately = true;
          }
        }
      }
      if (seenElsewhere) {
        StreamsMetrics.DUPLICATES.labels(e.source().wireName()).inc();
        context.forward(record, notesChild);
        return;
      }
      if (!seenHereLately) {
        store.put(key, source, ts);
      }
    }
    for (String child : detectorChildren) {
      context.forward(record, child);
    }
  }
}
