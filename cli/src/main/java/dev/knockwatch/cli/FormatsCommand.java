package dev.knockwatch.cli;

import dev.knockwatch.ingest.FormatsReference;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** The formats ingest reads, from their own declarations: docs/FORMATS.md's "Formats read" and the keys a source of each takes. */
@Command(name = "formats", mixinStandardHelpOptions = true,
    description = {"Print the log formats ingest reads (docs/FORMATS.md's \"Formats read\") and the keys a source of each takes"
        + " in sources.yaml, from the formats' own declarations."})
final class FormatsCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    PrintWriter out = spec.commandLine().getOut();
    out.print(FormatsReference.formats());
    out.println();
    out.print(FormatsReference.keys());
    out.flush();
    return Knockwatch.OK;
  }
}
