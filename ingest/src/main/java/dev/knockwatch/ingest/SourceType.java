package dev.knockwatch.ingest;

import dev.knockwatch.events.Source;
import dev.knockwatch.ingest.claudecode.ClaudeCodeParser;
import dev.knockwatch.ingest.probe.ProbeResultParser;
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
  /** Needs a field mapping: never picked by suffix, built by the source config (or parse --mapping). */
  JSON(Source.JSON, List.of(), () -> {
    throw new IllegalStateException("the json type needs a field mapping");
  }),
  STRACE(Source.STRACE, List.of(StraceParser.FILE_SUFFIX), StraceParser::new),
  /** Claude Code's hook records: {@code <agentId>/<sessionId>.claude-code.jsonl}, each record naming its tool call. */
  CLAUDE_CODE(Source.CLAUDE_CODE, List.of(ClaudeCodeParser.FILE_SUFFIX), ClaudeCodeParser::new),
  /** Guard probe results: not refusals, read so that a probe the sandbox let through raises wall-breach. */
  PROBE_RESULT(Source.PROBE_RESULT, List.of(ProbeResultParser.FILE_SUFFIX), ProbeResultParser::new);

  private final Source source;
  private final List<String> suffixes;
  private final Supplier<LineParser> parsers;

  SourceType(Source source, List<String> suffixes, Supplier<LineParser> parsers) {
    this.source = source;
    this.suffixes = suffixes;
    this.parsers = parsers;
  }

  /** Whether a file of this type holds one command's lines (the layout's {@code <commandId>.<suffix>}), not a shared log's. */
  public boolean perCommand() {
    return this != SQUID && this != JSON;
  }

  /** {@code srt-violation}, {@code strace}, ... */
  public Source source() {
    return source;
  }

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

  /**
   * The type a file's first line looks like, for files whose name says nothing; json is never
   * guessed (it needs a mapping).
   */
  public static Optional<SourceType> sniff(String firstLine) {
    String l = firstLine.strip();
    if (l.startsWith("{") && l.contains("\"line\"") && l.contains("deny ")) {
      return Optional.of(SRT_VIOLATION);
    }
    if (l.startsWith("{") && l.contains("\"hook_event_name\"") && l.contains("\"tool_use_id\"")) {
      return Optional.of(CLAUDE_CODE);
    }
    if (l.startsWith("{") && l.contains("\"probe\"") && l.contains("\"refused\"")) {
      return Optional.of(PROBE_RESULT);
    }
    if (SNIFF_SQUID.matcher(l).find() || SNIFF_COMBINED.matcher(l).find()) {
      return Optional.of(SQUID);
    }
    if (SNIFF_STRACE.matcher(l).find()) {
      return Optional.of(STRACE);
    }
    if (l.startsWith("* ") || l.startsWith("> ") || l.startsWith("< ") || l.startsWith("HTTP/1.")
        || l.equals("<sandbox_violations>")) {
      return Optional.of(PROXY_403);
    }
    return Optional.empty();
  }

  private static final java.util.regex.Pattern SNIFF_SQUID =
      java.util.regex.Pattern.compile("^\\d{9,}\\.\\d{3}\\s+-?\\d+\\s+\\S+\\s+[A-Z_]+/\\d{3}\\s");
  private static final java.util.regex.Pattern SNIFF_COMBINED =
      java.util.regex.Pattern.compile("^\\S+ \\S+ \\S+ \\[\\d{2}/\\w{3}/\\d{4}:[^\\]]+\\] \"[A-Z]+ ");
  private static final java.util.regex.Pattern SNIFF_STRACE =
      java.util.regex.Pattern.compile("^(?:\\[pid\\s+\\d+\\]\\s+|\\d+\\s+)?(?:[\\d:.]+\\s+)?[a-z_][a-z0-9_]*\\(.*\\)\\s+=\\s");

  /** The types a file name selects: what a plain log directory is read as. */
  public static String namesBySuffix() {
    return String.join(", ", Arrays.stream(values()).filter(t -> !t.suffixes.isEmpty()).map(SourceType::wireName).toList());
  }

  public static String names() {
    return String.join(", ", Arrays.stream(values()).map(SourceType::wireName).toList());
  }
}
