package dev.knockwatch.bench;

import dev.knockwatch.events.IsoInstant;
import java.time.Instant;
import org.openjdk.jmh.annotations.Benchmark;

/**
 * Timestamps' fast paths beside the JDK (an op is one instant): {@code IsoInstant.format} beside
 * {@code Instant.toString}, {@code IsoInstant.parse} beside {@code Instant.parse}, on srt's
 * millisecond timestamps over a day.
 */
public class IsoInstantBenchmark extends OneThread {

  final Instant[] instants = new Instant[1024];
  final String[] texts = new String[1024];
  int next;

  public IsoInstantBenchmark() {
    Instant t = Instant.parse("2026-11-29T18:45:32.887Z");
    for (int i = 0; i < instants.length; i++) {
      instants[i] = t.plusMillis(i * 84_397L);
      texts[i] = instants[i].toString();
    }
  }

  @Benchmark
  public String format() {
    return IsoInstant.format(instants[next++ & (instants.length - 1)]);
  }

  @Benchmark
  public String jdkToString() {
    return instants[next++ & (instants.length - 1)].toString();
  }

  @Benchmark
  public Instant parse() {
    return IsoInstant.parse(texts[next++ & (texts.length - 1)]);
  }

  @Benchmark
  public Instant jdkParse() {
    return Instant.parse(texts[next++ & (texts.length - 1)]);
  }
}
