package dev.knockwatch.streams.discover;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * The hours' buckets a query reads: this instance's, from each partition's store, by a key range
 * of the hours asked; and another instance's, as it sends them (each bucket's bytes in base64), so
 * that one instance merges every part the same way, distinct counts included.
 */
public final class Buckets {

  private Buckets() {}

  /** The buckets of the hours that overlap [since, until). */
  public static <V> List<V> read(List<? extends ReadOnlyKeyValueStore<String, V>> partitions, Instant since, Instant until) {
    String lo = DiscoverProcessor.hourKey(Math.floorDiv(since.toEpochMilli(), DiscoverProcessor.HOUR_MS));
    String hi = DiscoverProcessor.hourKey(Math.floorDiv(until.toEpochMilli() - 1, DiscoverProcessor.HOUR_MS)) + '\u0001';
    List<V> out = new ArrayList<>();
    for (ReadOnlyKeyValueStore<String, V> part : partitions) {
      try (KeyValueIterator<String, V> it = part.range(lo, hi)) {
        while (it.hasNext()) {
          KeyValue<String, V> kv = it.next();
          if (kv.value != null) {
            out.add(kv.value);
          }
        }
      }
    }
    return out;
  }

  public static List<String> encodeRoleHours(List<RoleHour> buckets) {
    return buckets.stream().map(b -> Base64.getEncoder().encodeToString(RoleHour.SERDE.serializer().serialize("", b)))
        .toList();
  }

  public static List<String> encodeOverviews(List<HourOverview> buckets) {
    return buckets.stream()
        .map(b -> Base64.getEncoder().encodeToString(HourOverview.SERDE.serializer().serialize("", b))).toList();
  }

  public static RoleHour roleHour(String base64) {
    return RoleHour.SERDE.deserializer().deserialize("", Base64.getDecoder().decode(base64));
  }

  public static HourOverview overview(String base64) {
    return HourOverview.SERDE.deserializer().deserialize("", Base64.getDecoder().decode(base64));
  }
}
