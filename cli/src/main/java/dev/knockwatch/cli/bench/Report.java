package dev.knockwatch.cli.bench;

import dev.knockwatch.events.Json;
import java.io.PrintWriter;
import java.util.Map;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** How every benchmark reports its result: one JSON object ({@code --json}), or one {@code name: value} line each. */
final class Report {

  @Spec(Spec.Target.MIXEE) CommandSpec spec;

  @Option(names = "--json", description = "Print one JSON object instead of text.")
  boolean json;

  void print(Map<String, Object> result) {
    PrintWriter out = spec.commandLine().getOut();
    if (json) {
      out.println(Json.write(result));
    } else {
      result.forEach((k, v) -> out.println(k + ": " + v));
    }
    out.flush();
  }
}
