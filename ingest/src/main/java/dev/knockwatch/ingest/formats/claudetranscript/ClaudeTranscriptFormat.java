package dev.knockwatch.ingest.formats.claudetranscript;

import dev.knockwatch.ingest.spi.FileOptions;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.SourceFormat;
import java.util.List;

/**
 * Claude Code's session transcripts, {@code ~/.claude/projects/<project>/<session>.jsonl}: the
 * hook-free path to what the hook records ({@link TranscriptParser}).
 */
public final class ClaudeTranscriptFormat implements SourceFormat {

  public static final String NAME = "claude-code-transcript";

  @Override
  public String wireName() {
    return NAME;
  }

  @Override
  public String summary() {
    return "Claude Code's session transcripts, `~/.claude/projects/<project>/<sessionId>.jsonl` (`up --claude-projects`),"
        + " written by Claude Code outside its sandbox: each Bash call as the model made it and its result as the model"
        + " was given it (`Exit code N`, the output, the `<sandbox_violations>` block), with Claude Code's own"
        + " `sandboxViolations` and `sandboxed` beside it. The tool call is the command, `promptId` the task, `sessionId`"
        + " the session; the same ids as the hook's and the telemetry's";
  }

  @Override
  public Choice choice() {
    return Choice.byTypeOnly().orFirstLine("a JSON object with `sessionId` and `\"type\":\"queue-operation\"` or"
        + " `parentUuid` (a transcript's first line)", l -> l.startsWith("{") && l.contains("\"sessionId\":\"")
            && (l.contains("\"type\":\"queue-operation\"") || l.contains("\"parentUuid\":")));
  }

  /** One session's lines: paced like a command's file; each record names its own call. */
  @Override
  public boolean perCommand() {
    return true;
  }

  @Override
  public LineParser parser(FileOptions options) {
    return new TranscriptParser();
  }

  @Override
  public List<Skip> skips() {
    return List.of(
        new Skip("other-record", "a transcript line that is no tool call and no tool result: a prompt, an attachment,"
            + " an API request's record"),
        new Skip("other-tool", "a tool call or result of another tool than `Bash`"),
        new Skip("no-door", "a Bash call whose command names no door and asks for no escape"),
        new Skip("no-refusal", "a Bash result with no sandbox violation and no refusal words"));
  }

  @Override
  public String yields() {
    return "one event per target and tool call, as the hook's (marked `evidence`): `sandbox-record`, each denial of"
        + " Claude Code's `sandboxViolations` (host and port), and a `dangerouslyDisableSandbox` call that ran with"
        + " `sandboxed: false` (`sandbox-off-approved`); `output`, the result's `<sandbox_violations>` lines and refusal"
        + " words; `command-text`, the doors of the call's command and its request to leave the sandbox";
  }

  @Override
  public Trust trust() {
    return new Trust("Claude Code, outside the sandbox (it denies writing `~/.claude/projects`): each line encoded by"
        + " Claude Code",
        "who and when in the task: the agent (the directory `up --claude-projects` maps), the session (`sessionId`), the"
        + " task (`promptId`), the command (the `tool_use` id, the model provider's); `sandboxViolations` and `sandboxed`",
        "the command text and `dangerouslyDisableSandbox` (the model's), the result's text (the command's): a command can"
        + " print a `<sandbox_violations>` block or refusal words and add refusals to its own call, never a field, a"
        + " record or another call");
  }
}
