package dev.knockwatch.bench;

import dev.knockwatch.events.EventWriter;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.ViolationEvent;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.serialization.Deserializer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Reading one event as detection does (an op is one event), with the events' serde (Jackson's
 * mapper), on the bytes {@link WriteBenchmark}'s events are written as.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
@Threads(1)
public class ReadBenchmark {

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
