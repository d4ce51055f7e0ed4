package dev.knockwatch.ingest.formats.codex;

import dev.knockwatch.ingest.spi.FileOptions;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.SourceFormat;
import java.util.List;

/**
 * OpenAI's Codex CLI: its session rollouts ({@code $CODEX_HOME/sessions/**}{@code /rollout-*.jsonl},
 * {@link RolloutParser}) and its OpenTelemetry log events ({@link CodexTelemetry}, through the OTLP
 * endpoint or an OTLP file). The thread is the session, a turn the task (named by its first
 * call), a call ({@code call_id}) the command.
 */
public final class CodexFormat implements SourceFormat {

  public static final String NAME = "codex";

  @Override
  public String wireName() {
    return NAME;
  }

  @Override
  public String summary() {
    return "OpenAI Codex CLI's session rollouts, `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread>.jsonl`"
        + " (`up --codex-home`), and its OpenTelemetry log events (`codex.*`, through the OTLP endpoint). The thread"
        + " is the session, a turn the task (named by its first call's id), a call (`call_id`) the command. One event"
        + " per call and target, whichever record names it first, with the same id from either record";
  }

  @Override
  public Choice choice() {
    return Choice.suffixes(".codex.jsonl").orFirstLine("a JSON object with `\"type\":\"session_meta\"` (a rollout's"
        + " first line)", l -> l.startsWith("{") && l.contains("\"type\":\"session_meta\""));
  }

  /** One session's rollout: paced like a command's file; each record names its own call. */
  @Override
  public boolean perCommand() {
    return true;
  }

  @Override
  public LineParser parser(FileOptions options) {
    return new RolloutParser(options.stem());
  }

  @Override
  public List<Skip> skips() {
    return List.of(
        new Skip("session", "a rollout's `session_meta` or `turn_context`: read for the thread and its directory"),
        new Skip("turn", "a turn's start (`task_started`): read to name the turn"),
        new Skip("other-record", "a rollout line that tells no call: a message, reasoning, a token count"),
        new Skip("no-door", "a `function_call` whose command names no door and asks for no escalation"),
        new Skip("no-refusal", "a call's output or execution that holds no refusal"));
  }

  @Override
  public Telemetry telemetry() {
    return new Telemetry(r -> r.eventName() != null && r.eventName().startsWith(CodexTelemetry.PREFIX),
        "records whose `event.name` starts with `codex.`", CodexTelemetry::new, List.of(
            new Skip("other-event", "a `codex.*` event that tells of no wall: an API request, a stream event, a token count"),
            new Skip("turn", "`codex.user_prompt`: a turn begins"),
            new Skip("decision", "`codex.tool_decision` and `codex.sandbox_outcome`: kept for the call's result, where"
                + " they count"),
            new Skip("allowed", "a `codex.network_proxy.policy_decision` that let the request through"),
            new Skip("no-refusal", "a `codex.tool_result` that holds no refusal, no door, no request to leave the sandbox")));
  }

  @Override
  public String yields() {
    return "one event per call and target, whichever record saw it first (marked `evidence`): `sandbox-record`, the"
        + " network proxy's refusal (`codex.network_proxy.policy_decision`: host, port, method, reason; a call's when one"
        + " call was running or its `execution.id` is known, else the turn's until a call's output names its host),"
        + " `codex.sandbox_outcome` `denied` with nothing else naming a target (action `sandbox-denied`), and an"
        + " escalation let out by `codex.tool_decision` (`sandbox-off-approved`, who approved in the reason);"
        + " `output`, the output's refusal words (Codex's `Network access to \"x\" was blocked`, curl's 403 and"
        + " `X-Proxy-Error`, `Read-only file system` with the path) and a sandbox that could not start (`bwrap: …`:"
        + " `sandbox-unavailable`, once a thread; the call's failure no refusal); `command-text`, the doors the command"
        + " names and its request to leave the sandbox (`require_escalated`: `sandbox-off-request`, with the model's"
        + " justification)";
  }

  @Override
  public Trust trust() {
    return new Trust("Codex, outside the sandbox: the rollout under `$CODEX_HOME/sessions` (read-only to its"
        + " sandboxed commands), and the OpenTelemetry records it exports",
        "who and when: the agent (the directory `up --codex-home` maps, or the OTLP client's token), the thread"
        + " (`conversation.id`, `session_meta.id`), the call (`call_id`: the model's provider names it, so a valid one is"
        + " the command, else one made of the thread and it); the network proxy's decisions; who approved an escalation",
        "the command (`cmd`), the escalation's `justification` and every output: a command can print `Network access"
        + " to \"x\" was blocked`, a fake 403 with `X-Proxy-Error` or `bwrap: …` and add refusals (or a"
        + " sandbox-unavailable warning) to its own call, never remove one, name another call or reach the proxy's"
        + " records");
  }
}
