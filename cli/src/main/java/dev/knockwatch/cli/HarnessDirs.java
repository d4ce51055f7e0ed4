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
 * Where an agent's harness writes its own records of a session, read as one agent's: a Codex CLI
 * home's rollouts ({@code --codex-home [AGENT=]DIR}: {@code DIR/sessions/**}{@code /rollout-*.jsonl})
 * and Claude Code's transcripts ({@code --claude-projects [AGENT=]DIR}: {@code DIR/**}{@code /*.jsonl},
 * DIR being {@code ~/.claude/projects}). Each is a source of its format made by the command line.
 */
enum HarnessDirs {
  CODEX("--codex-home", "codex", "sessions/**/rollout-*.jsonl", "codex", "Codex's rollouts"),
  CLAUDE("--claude-projects", "claude-code-transcript", "**/*.jsonl", "claude-code", "Claude Code's transcripts");

  final String option;
  final String format;
  final String glob;
  final String defaultAgent;
  final String what;

  HarnessDirs(String option, String format, String glob, String defaultAgent, String what) {
    this.option = option;
    this.format = format;
    this.glob = glob;
    this.defaultAgent = defaultAgent;
    this.what = what;
  }

  /** The agent and the directory of one option's value. */
  record Dir(String agent, Path dir) {}

  Dir parse(String value) {
    int eq = value.indexOf('=');
    String agent = eq > 0 ? value.substring(0, eq) : defaultAgent;
    String dir = eq > 0 ? value.substring(eq + 1) : value;
    AgentId.problem(agent).ifPresent(p -> {
      throw new UsageException(option + " " + value + ": the agent " + p);
    });
    if (dir.isBlank()) {
      throw new UsageException(option + " " + value + ": give a directory ([AGENT=]DIR)");
    }
    return new Dir(agent, Path.of(dir));
  }

  List<IngestAgent.Feed> feeds(List<String> values, Path checkpointDir) {
    List<IngestAgent.Feed> out = new ArrayList<>();
    if (values == null) {
      return out;
    }
    SourceFormat f = Formats.named(format).orElseThrow();
    for (String v : values) {
      Dir d = parse(v);
      out.add(SourcesConfig.of(d.dir().toAbsolutePath().normalize(), glob, f, Map.of("agentId", d.agent()),
          checkpointDir));
    }
    return out;
  }

  /** For the banner: each directory and its agent; "" when none. */
  String describe(List<String> values) {
    if (values == null || values.isEmpty()) {
      return "";
    }
    List<String> parts = new ArrayList<>();
    for (String v : values) {
      Dir d = parse(v);
      parts.add(d.dir().resolve(glob) + " as agent " + d.agent());
    }
    return ", and " + what + ": " + String.join(", ", parts);
  }

  /** The feeds of both kinds. */
  static List<IngestAgent.Feed> feeds(List<String> codexHomes, List<String> claudeProjects, Path checkpointDir) {
    List<IngestAgent.Feed> out = new ArrayList<>(CODEX.feeds(codexHomes, checkpointDir));
    out.addAll(CLAUDE.feeds(claudeProjects, checkpointDir));
    return out;
  }
}
