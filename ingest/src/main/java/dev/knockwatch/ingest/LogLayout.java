package dev.knockwatch.ingest;

import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.IngestAgent.Feed;
import dev.knockwatch.ingest.IngestAgent.FileContext;
import dev.knockwatch.ingest.spi.FileOptions;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.SourceFormat;
import dev.knockwatch.ingest.tail.FileTailer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The log directory's layout, {@code <root>/<agentId>/<commandId>.<suffix>}: what a file's path
 * says of its lines (their format, agent and command, a rotated file's as its stream's), and the
 * agents that read a directory so laid out ({@link #forLogDirectory}) or every file of one format
 * ({@link #forType}).
 */
public final class LogLayout {

  private LogLayout() {}

  /**
   * An agent for every file under {@code root} whose name selects a format
   * ({@code <root>/<agentId>/<commandId>.violations.jsonl}, {@code ….strace}), or only those
   * {@code only} accepts; {@code checkpointFile} null keeps positions in memory.
   */
  public static IngestAgent forLogDirectory(Path root, Predicate<Path> only, Path checkpointFile,
      EventSink sink, String ingestHost, Duration pollInterval) {
    return new IngestAgent(List.of(logDirectoryFeed(root, only, checkpointFile)), sink, ingestHost, Clock.systemUTC(),
        pollInterval);
  }

  /** The feed of every file under {@code root} whose name selects a format, or only those {@code only} accepts. */
  public static Feed logDirectoryFeed(Path root, Predicate<Path> only, Path checkpointFile) {
    FileTailer tailer = new FileTailer(root,
        p -> Formats.ofFileName(p.getFileName().toString()).isPresent() && only.test(p),
        checkpointFile, rel -> Formats.ofFileName(fileName(rel)).map(SourceFormat::maxLineBytes)
            .orElse(IngestAgent.MAX_LINE_BYTES));
    Function<String, FileContext> context = cached(rel -> contextOf(rel, records -> Files.exists(root.resolve(records))));
    return new Feed(tailer, context, "");
  }

  /**
   * What a file of the layout is, from its path relative to the root: its format (null when its
   * name tells none), its parsers, its agent and its command. {@code exists} tells whether a file
   * (relative to the root) exists: a format may read a file differently beside another (a proxy
   * transcript beside the srt bridge's records of the same command only restates them).
   */
  public static FileContext contextOf(String rel, Predicate<String> exists) {
    SourceFormat format = Formats.ofFileName(fileName(rel)).orElse(null);
    if (format == null) {
      return new FileContext(null, null, agentIdOf(rel), null);
    }
    String commandId = Formats.stem(format, fileName(rel));
    FileOptions options = FileOptions.defaults(format, rel, commandId, exists);
    return new FileContext(format, () -> format.parser(options), agentIdOf(rel), commandId);
  }

  /** An agent that reads every file under {@code root} as {@code format}, whatever its name, with these parsers. */
  public static IngestAgent forFormat(Path root, Predicate<Path> only, SourceFormat format, Supplier<LineParser> parsers,
      EventSink sink, String ingestHost) {
    FileTailer tailer = new FileTailer(root, only, null, format.maxLineBytes());
    Function<String, FileContext> context =
        cached(rel -> new FileContext(format, parsers, agentIdOf(rel), Formats.stem(format, fileName(rel))));
    return new IngestAgent(List.of(new Feed(tailer, context, "")), sink, ingestHost, Clock.systemUTC(), Duration.ZERO);
  }

  /**
   * Remembers what each file is (its context is asked for every line; working it out from the
   * path, or the first line, for each would cost more than parsing the line).
   */
  public static Function<String, FileContext> cached(Function<String, FileContext> context) {
    Map<String, FileContext> known = new LinkedHashMap<>(16, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<String, FileContext> eldest) {
        return size() > IngestAgent.MAX_OPEN_PARSERS;
      }
    };
    return rel -> known.computeIfAbsent(rel, context);
  }

  /** {@code <agentId>/<commandId>.<suffix>}: the directory names the agent. */
  public static String agentIdOf(String relativeFile) {
    String[] parts = relativeFile.split("/");
    return parts.length >= 2 ? parts[parts.length - 2] : null;
  }

  /**
   * The file's name as its stream's: without a rotation suffix ({@code access.log.1} is
   * {@code access.log}), so a rotated file is read as the format, and the command, of its stream.
   */
  public static String fileName(String relativeFile) {
    String name = relativeFile.substring(relativeFile.lastIndexOf('/') + 1);
    String base = FileTailer.rotatedFrom(name);
    return base != null ? base : name;
  }
}
