package dev.knockwatch.ingest.formats.codex;

import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.formats.toolcall.ToolCall;
import dev.knockwatch.ingest.spi.Attribution;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.Rejection;
import dev.knockwatch.ingest.spi.SourceLine;
import dev.knockwatch.ingest.spi.TelemetryReader;
import dev.knockwatch.ingest.spi.TelemetryRecord;
import java.util.Iterator;
import java.util.List;

/**
 * Codex's OpenTelemetry log events (its {@code [otel]} exporter; the names and attributes are
 * codex-rs's {@code otel/src/events/session_telemetry.rs}, {@code otel/src/tool_result.rs} and
 * {@code network-proxy/src/network_policy.rs} as Codex 0.171.0 sends them): each call's
 * {@code codex.tool_decision} (who let it run), {@code codex.sandbox_outcome} (the sandbox denied
 * it), {@code codex.tool_result} (its arguments and output), and the network proxy's
 * {@code codex.network_proxy.policy_decision} (a refused request's host, port and reason, naming no
 * call). The thread is {@code conversation.id}; a turn is what follows a {@code codex.user_prompt}.
 *
 * <p>A proxy refusal belongs to the one call open when it came (decided, not ended), or to the call
 * its {@code execution.id} was tied to; with several open it counts at the turn, and the first of
 * them whose output names its host takes it, so it counts once.
 */
final class CodexTelemetry implements TelemetryReader {

  static final String PREFIX = "codex.";
  private static final int MAX_OPEN = 64;

  private final CodexThreads threads = new CodexThreads();

  @Override
  public Parsed read(TelemetryRecord r, SourceLine where) {
    String name = r.eventName();
    if (!READ.contains(name)) {
      return Parsed.skipped("other-event");
    }
    String threadId = Attribution.grainId(r.attribute("conversation.id"));
    if (threadId == null) {
      return Parsed.rejected(Rejection.UNPARSEABLE, "a " + name + " record with no conversation.id (or one that is no"
          + " id): not Codex's, or cut");
    }
    CodexThreads.Thread t = threads.thread(threadId);
    switch (name) {
      case "codex.user_prompt" -> {
        t.newTurn();
        t.open.clear();
        return Parsed.skipped("turn");
      }
      case "codex.tool_decision", "codex.sandbox_outcome" -> {
        String callId = callId(r);
        if (callId == null) {
          return Parsed.rejected(Rejection.MISSING_COMMAND_ID, "a " + name + " record with no call_id");
        }
        CodexThreads.Call c = t.call(callId);
        if (name.equals("codex.tool_decision")) {
          c.decision = Sanitize.text(r.attribute("decision"), 64);
          c.decidedBy = Sanitize.text(r.attribute("source"), 64);
          open(t, callId);
        } else {
          c.denied = "denied".equals(r.attribute("outcome"));
        }
        return Parsed.skipped("decision");
      }
      case "codex.tool_result" -> {
        return result(r, where, t);
      }
      default -> {
        return proxy(r, where, t);
      }
    }
  }

  private static final List<String> READ = List.of("codex.user_prompt", "codex.tool_decision", "codex.sandbox_outcome",
      "codex.tool_result", "codex.network_proxy.policy_decision");

  private Parsed result(TelemetryRecord r, SourceLine where, CodexThreads.Thread t) {
    String callId = callId(r);
    if (callId == null) {
      return Parsed.rejected(Rejection.MISSING_COMMAND_ID, "a codex.tool_result record with no call_id (a call that"
          + " failed before it ran names none)");
    }
    CodexThreads.Call c = t.call(callId);
    Attribution.Result who = Attribution.of(where.agentIdFromPath(), c.commandId, null, null);
    if (who instanceof Attribution.Refused no) {
      return no.parsed();
    }
    CodexCalls.Arguments a = CodexCalls.Arguments.of(r.attribute("arguments"));
    c.command = a.command() != null ? a.command() : c.command;
    c.escalated |= a.escalated();
    c.justification = a.justification() != null ? a.justification() : c.justification;
    ToolCall call = CodexCalls.toolCall(where, (Attribution.Attributed) who, t, c, r.time());
    CodexCalls.arguments(call, c);
    boolean unavailable = CodexCalls.output(call, t, r.attribute("output"));
    claimUntied(t, c, call);
    if (c.escalated && c.approved()) {
      CodexCalls.approved(call, ViolationEvent.EVIDENCE_SANDBOX, c.decidedBy == null ? "Codex (no source named)"
          : c.decidedBy);
    }
    if (c.denied && !unavailable) {
      CodexCalls.denied(call, c);
    }
    t.open.remove(callId);
    return call.events().isEmpty() ? Parsed.skipped("no-refusal") : new Parsed.Events(call.events());
  }

  /** The call named a host the proxy refused at the turn: that refusal was this call's, and counted already. */
  private static void claimUntied(CodexThreads.Thread t, CodexThreads.Call c, ToolCall call) {
    if (t.untied.isEmpty()) {
      return;
    }
    List<ViolationEvent> events = call.events();
    for (int i = events.size() - 1; i >= 0; i--) {
      ViolationEvent e = events.get(i);
      if (e.host() == null) {
        continue;
      }
      for (Iterator<CodexThreads.Untied> it = t.untied.iterator(); it.hasNext(); ) {
        CodexThreads.Untied u = it.next();
        if (u.host().equals(e.host()) && java.util.Objects.equals(u.turn(), c.turn)) {
          it.remove();
          events.remove(i);
          break;
        }
      }
    }
  }

  private Parsed proxy(TelemetryRecord r, SourceLine where, CodexThreads.Thread t) {
    if (!"deny".equals(r.attribute("network.policy.decision"))) {
      return Parsed.skipped("allowed");
    }
    String reason = r.attribute("network.policy.reason");
    String source = r.attribute("network.policy.source");
    String method = r.attribute("http.request.method");
    CodexCalls.ProxyRefusal p = new CodexCalls.ProxyRefusal(Sanitize.text(r.attribute("server.address"), 253),
        port(r.attribute("server.port")), method == null || method.equals("none") ? null : Sanitize.text(method, 16),
        r.attribute("network.transport.protocol"), "Codex's network proxy refused it: "
        + (reason == null ? "no reason given" : reason) + (source == null ? "" : " (" + source + ")"));
    String execution = Attribution.grainId(r.attribute("execution.id"));
    String callId = execution == null ? null : t.executions.get(execution);
    if (callId == null && t.open.size() == 1) {
      callId = t.open.iterator().next();
      if (execution != null) {
        t.executions.put(execution, callId);
      }
    }
    if (callId != null) {
      CodexThreads.Call c = t.call(callId);
      Attribution.Result who = Attribution.of(where.agentIdFromPath(), c.commandId, null, null);
      if (who instanceof Attribution.Refused no) {
        return no.parsed();
      }
      ToolCall call = CodexCalls.toolCall(where, (Attribution.Attributed) who, t, c, r.time());
      call.add(ViolationEvent.EVIDENCE_SANDBOX, "net:" + (p.knownHost() ? p.host() : "?"), p::fill);
      return call.events().isEmpty() ? Parsed.skipped("no-refusal") : new Parsed.Events(call.events());
    }
    // calls run side by side: the refusal is the turn's until a call's output names its host
    String agent = where.agentIdFromPath();
    if (agent != null && dev.knockwatch.events.AgentId.problem(agent).isPresent()) {
      return Parsed.rejected(Rejection.BAD_AGENT_ID, "the agent this exporter is mapped to is no agent id: "
          + dev.knockwatch.events.AgentId.problem(agent).get());
    }
    if (t.untied.size() >= CodexThreads.MAX_UNTIED) {
      t.untied.remove(0);
    }
    if (p.knownHost()) {
      t.untied.add(new CodexThreads.Untied(p.host(), t.turn));
    }
    ViolationEvent.Builder b = where.newEvent().eventId(CodexCalls.id(where.agentIdFromPath(), t.id,
        "execution/" + execution + "/" + p.host())).commandUnknown(true).source(CodexFormat.NAME)
        .sessionId(t.id).taskId(t.turn).evidence(ViolationEvent.EVIDENCE_SANDBOX).observedAt(r.time());
    p.fill(b);
    return Parsed.of(b.build());
  }

  private static void open(CodexThreads.Thread t, String callId) {
    if (t.open.size() >= MAX_OPEN) {
      Iterator<String> oldest = t.open.iterator();
      oldest.next();
      oldest.remove();
    }
    t.open.add(callId);
  }

  private static String callId(TelemetryRecord r) {
    String id = r.attribute("call_id");
    return id == null || id.isEmpty() ? null : Sanitize.text(id, 256);
  }

  private static Integer port(String p) {
    try {
      int v = Integer.parseInt(p == null ? "" : p.strip());
      return v > 0 && v <= 65535 ? v : null;
    } catch (NumberFormatException e) {
      return null;
    }
  }
}
