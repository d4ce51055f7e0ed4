package dev.knockwatch.cli;

import dev.knockwatch.cli.run.UsageException;
import dev.knockwatch.events.AgentId;
import dev.knockwatch.ingest.Formats;
import dev.knockwatch.ingest.IngestAgent;
import dev.knockwatch.ingest.config.SourcesConfig;
import dev.knockwatch.ingest.spi.SourceFormat;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code --codex-home [AGENT=]DIR}: a Codex CLI's home, whose session rollouts
 * ({@code DIR/sessions/**}{@code /rollout-*.jsonl}) are read as the agent's (default {@value #DEFAULT_AGENT}):
 * a source of type {@code codex} made by the command line.
 */
final class CodexHomes {

  static final String DEFAULT_AGENT = "codex";
  static final String ROLLOUTS = "sessions/**/rollout-*.jsonl";

  private CodexHomes() {}

  /** The agent and the directory of one {@code --codex-home}. */
  record Home(String agent, Path dir) {

    static Home of(String option) {
      int eq = option.indexOf('=');
      String agent = eq > 0 ? option.substring(0, eq) : DEFAULT_AGENT;
      String dir = eq > 0 ? option.substring(eq + 1) : option;
      AgentId.problem(agent).ifPresent(p -> {
        throw new UsageException("--codex-home " + option + ": the agent " + p);
      });
      if (dir.isBlank()) {
        throw new UsageException("--codex-home " + option + ": give a directory ([AGENT=]DIR)");
      }
      return new Home(agent, Path.of(dir));
    }
  }

  static List<IngestAgent.Feed> feeds(List<String> options, Path checkpointDir) {
    List<IngestAgent.Feed> out = new ArrayList<>();
    if (options == null) {
      return out;
    }
    SourceFormat codex = Formats.named("codex").orElseThrow();
    for (String o : options) {
      Home h = Home.of(o);
      out.add(SourcesConfig.of(h.dir().toAbsolutePath().normalize(), ROLLOUTS, codex, Map.of("agentId", h.agent()),
          checkpointDir));
    }
    return out;
  }

  /** For the banner: each home and its agent. */
  static String describe(List<String> options) {
    List<String> parts = new ArrayList<>();
    for (String o : options) {
      Home h = Home.of(o);
      parts.add(h.dir().resolve(ROLLOUTS) + " as agent " + h.agent());
    }
    return String.join(", ", parts);
  }
}
