package dev.knockwatch.bench;

import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.SourceLine;
import dev.knockwatch.ingest.formats.squid.SquidAccessLogParser;
import dev.knockwatch.ingest.formats.srt.SrtViolationParser;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;

/**
 * Parsing alone, one thread: lines/s of each parser on a real-shaped line (an op is one line).
 * {@code srtRecord} repeats one record, as a retrying command does (the parser reads one command's
 * file, and remembers the last command text it redacted); {@code srtRecordEachCommandNew} gives
 * every record another command text.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
public class ParseBenchmark extends OneThread {

  static final Instant NOW = Instant.parse("2026-11-29T19:00:00Z");
  static final String SRT = "{\"line\":\"deny network-outbound example.com:443 (host is not on the allow list)\","
      + "\"encodedCommand\":\"eGhmSHl0bVhMLUw2UnNZdzJDclNqQQ==\",\"command\":\"curl -s https://example.com/path?token=SECRET\","
      + "\"timestamp\":\"2026-11-29T18:45:32.887Z\"}";
  static final String SQUID = "1795978485.769      0 127.0.0.1 TCP_DENIED/403 3495 CONNECT example.com:443 "
      + "srt.eGhmSHl0bVhMLUw2UnNZdzJDclNqQQ== xhfHytmXL-L6RsYw2CrSjA HIER_NONE/- text/html";

  /** 4,096 records whose command texts all differ: no record repeats the one before. */
  static final String[] SRT_DISTINCT = new String[4096];

  static {
    for (int i = 0; i < SRT_DISTINCT.length; i++) {
      SRT_DISTINCT[i] = SRT.replace("/path?token=SECRET", "/path" + i + "?token=SECRET" + i);
    }
  }

  final SrtViolationParser srt = new SrtViolationParser();
  final SquidAccessLogParser squid = new SquidAccessLogParser();
  long offset;

  @Benchmark
  public Parsed srtRecord() {
    return srt.parse(new SourceLine("ci-1/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl", offset++, SRT, "ci-1", "xhfHytmXL-L6RsYw2CrSjA", "h", NOW));
  }

  /** Every command text new: the worst case for the parser's last-command memory (a file holds one command). */
  @Benchmark
  public Parsed srtRecordEachCommandNew() {
    long n = offset++;
    return srt.parse(new SourceLine("ci-1/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl", n,
        SRT_DISTINCT[(int) (n & (SRT_DISTINCT.length - 1))], "ci-1", "xhfHytmXL-L6RsYw2CrSjA", "h", NOW));
  }

  /** Redaction alone, of a command text like bench ingest's: each one new, one secret in it. */
  @Benchmark
  public String redactCommand() {
    return dev.knockwatch.events.Redactor.redact(COMMANDS[(int) (offset++ & (COMMANDS.length - 1))]);
  }

  static final String[] COMMANDS = new String[4096];

  static {
    for (int i = 0; i < COMMANDS.length; i++) {
      COMMANDS[i] = "curl -s https://example.com:443/path?token=SECRET" + i;
    }
  }

  @Benchmark
  public Parsed squidKnockLine() {
    return squid.parse(new SourceLine("proxy/access.log", offset++, SQUID, "proxy", null, "h", NOW));
  }
}
