package dev.knockwatch.ingest.formats.squid;

import dev.knockwatch.bench.OneThread;
import org.openjdk.jmh.annotations.Benchmark;

/**
 * A Squid access-log line's fast path beside the library (an op is one line): the logformat's
 * left-to-right scan ({@code read}) and its regex alone ({@code readByPattern}), on knock-format
 * lines as srt's proxy writes them, each of another command.
 */
public class SquidScanBenchmark extends OneThread {

  final SquidLogFormat knock = SquidLogFormat.of("knock");
  final String[] lines = new String[1024];
  int next;

  public SquidScanBenchmark() {
    for (int i = 0; i < lines.length; i++) {
      lines[i] = String.format("1795978485.%03d %6d 127.0.0.1 TCP_DENIED/403 3495 CONNECT example.com:443 "
          + "srt.eGhmSHl0bVhMLUw2UnNZdzJDclNqQQ== bench%017d HIER_NONE/- text/html", i % 1000, i % 7, i);
    }
  }

  @Benchmark
  public Object scan() {
    return knock.read(lines[next++ & (lines.length - 1)]);
  }

  @Benchmark
  public Object regex() {
    return knock.readByPattern(lines[next++ & (lines.length - 1)]);
  }
}
