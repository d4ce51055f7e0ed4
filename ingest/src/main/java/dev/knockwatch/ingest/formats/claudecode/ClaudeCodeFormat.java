package dev.knockwatch.ingest.formats.claudecode;

import dev.knockwatch.ingest.spi.FileOptions;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.SourceFormat;
import java.util.List;

/** Claude Code's hook records: {@code <agentId>/<sessionId>.claude-code.jsonl}, as knockwatch's hook writes them. */
public final class ClaudeCodeFormat implements SourceFormat {

  public static final String NAME = "claude-code";

  @Override
  public String wireName() {
    return NAME;
  }

  @Override
  public String summary() {
    return "Claude Code's hook records, `<logs>/<agentId>/<sessionId>.claude-code.jsonl` as `./knockwatch claude-code"
        + " settings`'s hook writes them: one JSON object a line per Bash call's `PreToolUse` and"
        + " `PostToolUse(Failure)`. The tool call (`tool_use_id`) is the command, `prompt_id` the task, `session_id` the"
        + " session: the harness's words. One event per target and tool call from the `<sandbox_violations>` block, the"
        + " output's refusal words, or the command's text";
  }

  @Override
  public Choice choice() {
    return Choice.suffixes(".claude-code.jsonl").orFirstLine("a JSON object with `hook_event_name` and `tool_use_id`",
        l -> l.startsWith("{") && l.contains("\"hook_event_name\"") && l.contains("\"tool_use_id\""));
  }

  /** One session's records: paced like a command's file; each record names its own command. */
  @Override
  public boolean perCommand() {
    return true;
  }

  @Override
  public LineParser parser(FileOptions options) {
    return new ClaudeCodeParser();
  }

  @Override
  public List<Skip> skips() {
    return List.of(
        new Skip("other-hook", "a hook record of another event than `PreToolUse`, `PostToolUse` or `PostToolUseFailure`"),
        new Skip("other-tool", "a hook record of another tool than `Bash` (Read, Edit, WebFetch: not the sandbox's)"),
        new Skip("no-door", "a `PreToolUse` whose command text names none of the doors `CommandText` looks for"),
        new Skip("no-refusal", "a `PostToolUse(Failure)` whose output holds no refusal: no `<sandbox_violations>`"
            + " block, no refusal words"));
  }

  @Override
  public Telemetry telemetry() {
    return new Telemetry(ClaudeCodeTelemetry::reads, "`claude_code.tool_decision` and `claude_code.tool_result` of"
        + " `service.name` `claude-code` (with `OTEL_LOG_TOOL_DETAILS=1`: their `tool_parameters`)",
        ClaudeCodeTelemetry::new, List.of(
            new Skip("other-tool", "a decision or result of another tool than `Bash`"),
            new Skip("no-details", "a decision or result without `tool_parameters` (`OTEL_LOG_TOOL_DETAILS` unset): it names"
                + " no command"),
            new Skip("no-door", "a decision or result whose command names no door and asks for no escape")));
  }

  @Override
  public String yields() {
    return "one event per target and tool call, whichever evidence saw it first (marked `evidence`): `command-text`,"
        + " the doors a `PreToolUse`'s command names (IP literals in any form, cloud-metadata names, URL shorteners, a"
        + " URL fetched with `--noproxy` or through SOCKS); `sandbox-record`, each `deny …` line of the"
        + " `<sandbox_violations>` block Claude Code appends to the output; `output`, the output's refusal words"
        + " (everything proxy-403 reads, `curl: (7) Failed to connect`, wget's and Python's refused tunnels, Node's"
        + " `tunneling socket could not be established`, and `Read-only file system` / `Permission denied` / `Operation"
        + " not permitted` with the path, joined to the call's `cwd`). A refusal with no known target is dropped when"
        + " its call has one with a target. From its OpenTelemetry (`claude-code settings --otel`): the doors of"
        + " `tool_parameters.full_command` and a `dangerouslyDisableSandbox` request, never a refusal's target (no event"
        + " carries the sandbox's violations, the exit code or the output)";
  }

  @Override
  public Trust trust() {
    return new Trust("Claude Code, through knockwatch's hook (`probes/claude-code/hook.sh`, run outside the sandbox):"
        + " one JSON record per Bash call's start and end, encoded by Claude Code",
        "who and when in the task: the agent (the directory, set by `claude-code settings --agent`), the session"
        + " (`session_id`), the task (`prompt_id`) and the command (`tool_use_id`); which call asked for no sandbox",
        "the command text and `dangerouslyDisableSandbox` (the model's), the output (the command's), each a JSON string"
        + " inside the record: it can add refusals to its own call, never a field or a record");
  }
}
