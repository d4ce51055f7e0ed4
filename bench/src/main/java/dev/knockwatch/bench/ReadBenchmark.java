package dev.knockwatch.bench;

import dev.knockwatch.events.EventWriter;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.ViolationEvent;
import org.apache.kafka.common.serialization.Deserializer;
import org.openjdk.jmh.annotations.Benchmark;

/**
 * Reading one event as detection does (an op is one event), with the events' serde (Jackson's
 * mapper), on the bytes {@link WriteBenchmark}'s events are written as.
 */
public class ReadBenchmark extends OneThread {

  final byte[][] events = new byte[1024][];
  int next;

  public ReadBenchmark() {
    WriteBenchmark written = new WriteBenchmark();
    for (int i = 0; i < events.length; i++) {
      events[i] = EventWriter.toBytes(written.events[i]);
    }
  }

  final Deserializer<ViolationEvent> serde = Json.eventSerde().deserializer();

  @Benchmark
  public ViolationEvent serde() {
    return serde.deserialize("knockwatch.violations", events[next++ & (events.length - 1)]);
  }
}
