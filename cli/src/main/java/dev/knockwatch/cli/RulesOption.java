package dev.knockwatch.cli;

import java.nio.file.Path;
import picocli.CommandLine.Option;

/** {@code --rules}: the alert-rules directory, for every command that reads it (up, streams, notify, replay). */
final class RulesOption {

  @Option(names = "--rules", paramLabel = "DIR", defaultValue = "${env:KNOCKWATCH_RULES:-alert-rules}",
      description = "The alert-rules directory: rules.yaml, roles.yaml, receivers.yaml (default: ${DEFAULT-VALUE}; "
          + "env KNOCKWATCH_RULES).")
  Path dir;
}
