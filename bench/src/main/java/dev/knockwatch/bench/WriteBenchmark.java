package dev.knockwatch.bench;

import dev.knockwatch.events.EventWriter;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.ViolationEvent;
import java.time.Instant;
import org.openjdk.jmh.annotations.Benchmark;

/**
 * Writing one event as the ingest publisher does (an op is one event): the event writer beside
 * the Jackson mapper, on the event an srt record becomes. Each event has its own command text
 * and id, as in {@code bench ingest}, so the writer's memory of repeated values only helps where
 * it does there.
 */
public class WriteBenchmark extends OneThread {

  static final Instant AT = Instant.parse("2026-11-29T18:45:32.887Z");
  final ViolationEvent[] events = new ViolationEvent[1024];
  int next;

  public WriteBenchmark() {
    for (int i = 0; i < events.length; i++) {
      events[i] = ViolationEvent.builder().eventId(String.format("3f0a5c9485b29ddf%016x", i * 65536L))
          .commandId("xhfHytmXL-L6RsYw2CrSjA").agentId("ci-1").source("srt-violation").kind(Kind.NETWORK)
          .action("network-outbound").host("example.com").port(443).reason("host is not on the allow list")
          .observedAt(AT.plusMillis(i)).ingestedAt(AT.plusMillis(i + 5))
          .commandText("curl -s https://example.com/path?token=[REDACTED]&n=" + i)
          .origin(new ViolationEvent.Origin("ci-1/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl", 230L * i, "host-a"))
          .build();
    }
  }

  @Benchmark
  public byte[] eventWriter() {
    return EventWriter.toBytes(events[next++ & (events.length - 1)]);
  }

  @Benchmark
  public byte[] mapper() throws Exception {
    return Json.MAPPER.writeValueAsBytes(events[next++ & (events.length - 1)]);
  }
}
