package dev.knockwatch.ingest;

import dev.knockwatch.events.Source;
import dev.knockwatch.ingest.proxy.CurlTranscriptParser;
import dev.knockwatch.ingest.squid.SquidAccessLogParser;
import dev.knockwatch.ingest.srt.SrtViolationParser;
import dev.knockwatch.ingest.strace.StraceParser;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The log formats ingest reads: the name used by {@code --type} and the event's {@code source},
 * the file suffixes that select it, and a fresh parser per file (some formats span lines).
 */
public enum SourceType {
  SRT_VIOLATION(Source.SRT_VIOLATION, List.of(SrtViolationParser.FILE_SUFFIX), SrtViolationParser::new),
  PROXY_403(Source.PROXY_403, List.of(".stderr.log", ".curl.log"), CurlTranscriptParser::new),
  SQUID(Source.SQUID, List.of("access.log"), SquidAccessLogParser::new),
  STRACE(Source.STRACE, List.of(StraceParser.FILE_SUFFIX), StraceParser::new);

  private final Source source;
  private final List<String> suffixes;
  private final Supplier<LineParser> parsers;

  SourceType(Source source, List<String> suffixes, Supplier<LineParser> parsers) {
    this.source = source;
    this.suffixes = suffixes;
    this.parsers = parsers;
  }

  /** {@code srt-violation}, {@code strace}, ... */
  public String wireName() {
    return source.wireName();
  }

  public LineParser newParser() {
    return parsers.get();
  }

  public List<String> suffixes() {
    return suffixes;
  }

  public static Optional<SourceType> byName(String name) {
    return Arrays.stream(values()).filter(t -> t.wireName().equals(name)).findFirst();
  }

  /** The type a file's name selects, e.g. {@code <commandId>.strace}. */
  public static Optional<SourceType> ofFileName(String fileName) {
    return Arrays.stream(values()).filter(t -> t.suffixes.stream().anyMatch(fileName::endsWith)).findFirst();
  }

  /** The file name without this type's suffix: the commandId in the {@code <agentId>/<commandId>.<suffix>} layout. */
  public String stem(String fileName) {
    for (String s : suffixes) {
      if (fileName.endsWith(s)) {
        return fileName.substring(0, fileName.length() - s.length());
      }
    }
    return null;
  }

  public static String names() {
    return String.join(", ", Arrays.stream(values()).map(SourceType::wireName).toList());
  }
}
