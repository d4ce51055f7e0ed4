package dev.knockwatch.cli;

import dev.knockwatch.cli.run.UsageException;
import dev.knockwatch.ingest.LogLayout;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.RejectedLine;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.EventSink;
import dev.knockwatch.ingest.IngestAgent;
import dev.knockwatch.events.config.KeyValues;
import dev.knockwatch.events.config.YamlFile;
import dev.knockwatch.ingest.Formats;
import dev.knockwatch.ingest.spi.FileOptions;
import dev.knockwatch.ingest.spi.SourceFormat;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import dev.knockwatch.ingest.spi.LineParser;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** Parses one file the way ingest would and prints what it yields; nothing is published. */
@Command(name = "parse", mixinStandardHelpOptions = true,
    description = {"Print the events a log file yields, one JSON object per line.",
        "Rejected lines go to stderr with their reason; the exit code is 0 even when some are rejected.",
        "The agentId comes from the file's directory, the commandId from its name where the format needs it."})
final class ParseCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Option(names = "--type", paramLabel = "TYPE",
      description = "The format (default: from the file name's suffix).")
  String type;

  @Option(names = "--with", paramLabel = "KEY=VALUE",
      description = "A key of the format, as a source of it takes it in sources.yaml, its value in YAML:"
          + " --with logformat=knock, --with 'mapping={commandId: cmd, status: code}' (docs/FORMATS.md lists each format's keys).")
  Map<String, String> with;

  @Option(names = "--format", paramLabel = "FORMAT", defaultValue = "json",
      description = "json (knockwatch's event, the default), ocsf (OCSF " + dev.knockwatch.events.export.Ocsf.VERSION + ": Network Activity or File System Activity with the security-control profile) or ecs (Elastic Common Schema).")
  String format;

  @Parameters(paramLabel = "FILE", description = "The log file.")
  Path file;

  @Override
  public Integer call() throws Exception {
    if (!Files.isRegularFile(file)) {
      throw new UsageException("file " + file + " does not exist");
    }
    String name = file.getFileName().toString();
    SourceFormat t = type != null
        ? Formats.named(type).orElseThrow(() -> new UsageException(
            "unknown --type " + type + " (known: " + Formats.names() + ")"))
        : Formats.ofFileName(name).orElseThrow(() -> new UsageException(
            "cannot tell the format of " + name + " from its name: give --type (" + Formats.names() + ")"));
    InputTree tree = InputTree.of(file);
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    java.util.function.Function<ViolationEvent, String> writer = switch (format) {
      case "json" -> Json::write;
      case "ocsf" -> e -> dev.knockwatch.events.export.Ocsf.event(e).toString();
      case "ecs" -> e -> dev.knockwatch.events.export.Ecs.event(e).toString();
      default -> throw new UsageException("--format " + format + " is not one of json, ocsf, ecs");
    };
    try (EventSink printing = new PrintingSink(out, err, writer)) {
      IngestAgent agent = LogLayout.forFormat(tree.root(), tree.only(), t, parsers(t),
          printing, "parse").wholeFiles();
      while (agent.pollOnce() > 0) {
        // to the end of the file
      }
    }
    out.flush();
    err.flush();
    return Knockwatch.OK;
  }

  /** The file's parsers, with the format's keys as {@code --with} gives them (each checked as sources.yaml's are). */
  private Supplier<LineParser> parsers(SourceFormat t) {
    StringBuilder yaml = new StringBuilder("{");
    (with == null ? Map.<String, String>of() : with).forEach((k, v) -> yaml.append(Json.write(k)).append(": ").append(v).append(", "));
    List<String> problems = new ArrayList<>();
    YamlFile given = new YamlFile(WITH, problems);
    KeyValues values = given.parse(yaml.append("}").toString())
        .flatMap(root -> KeyValues.of(root, "--type " + t.wireName(), t.keys())).orElse(null);
    if (!problems.isEmpty()) {
      throw new UsageException(String.join("; ", problems.stream().map(p -> p.replaceFirst("^" + WITH + ":\\d+: ", "")).toList()));
    }
    String name = file.getFileName().toString();
    FileOptions options = new FileOptions(values, name, Formats.stem(t, name), sibling -> false);
    return () -> t.parser(options);
  }

  private static final String WITH = "--with";

  /** Events to stdout as JSON lines, rejected lines to stderr as {@code file:offset: code: reason}. */
  private record PrintingSink(PrintWriter out, PrintWriter err, java.util.function.Function<ViolationEvent, String> writer)
      implements EventSink {
    @Override
    public void publish(ViolationEvent event) {
      // a rejected refusal's notice (for detection's ingest-rejects) is no event of the file: its line is on stderr
      if (event.unattributed() == null) {
        out.println(writer.apply(event));
      }
    }

    @Override
    public void reject(RejectedLine r) {
      err.println(Sanitize.text(r.file(), 300) + ":" + r.offset() + ": " + r.code() + ": " + r.reason());
    }

    @Override
    public void flush() {
      out.flush();
    }

    @Override
    public void close() {
      out.flush();
      err.flush();
    }
  }
}
