package dev.knockwatch.ingest.formats.codex;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.HostClassifier;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Redactor;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.formats.proxy.ProxyWords;
import dev.knockwatch.ingest.formats.toolcall.ToolCall;
import dev.knockwatch.ingest.spi.Attribution;
import dev.knockwatch.ingest.spi.EventIds;
import dev.knockwatch.ingest.spi.SourceLine;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a Codex call's records tell, read alike from OpenTelemetry and from the rollout: the doors
 * its command names, its request to run outside the sandbox ({@code require_escalated}) and who let
 * it out, the refusals in its output (curl's and the shell's words, Codex's {@code Network access to
 * "x" was blocked}), the network proxy's own refusals, and a sandbox that could not start.
 *
 * <p>An event's id is its thread's, call's and target's (never where it was read), so the same
 * refusal read from OpenTelemetry and from the rollout is one event (detection drops the second).
 */
final class CodexCalls {

  /** bubblewrap could not start Codex's sandbox helper: the call never ran in a sandbox. */
  private static final Pattern UNAVAILABLE = Pattern.compile("(?m)^bwrap: (.{1,200})$");
  static final String SANDBOX_DENIED = "sandbox-denied";

  private CodexCalls() {}

  /** What the model asked of a call: its command, whether it asked to leave the sandbox, and why. */
  record Arguments(String command, boolean escalated, String justification) {

    static final Arguments NONE = new Arguments(null, false, null);

    /** The call's arguments JSON ({@code exec_command}'s {@code cmd}; the older {@code shell}'s {@code command} list). */
    static Arguments of(String json) {
      if (json == null || json.isBlank()) {
        return NONE;
      }
      JsonNode a;
      try {
        a = Json.MAPPER.readTree(json);
      } catch (java.io.IOException e) {
        return NONE;
      }
      if (a == null || !a.isObject()) {
        return NONE;
      }
      String command = null;
      if (a.path("cmd").isTextual()) {
        command = a.path("cmd").asText();
      } else if (a.path("command").isArray()) {
        StringBuilder b = new StringBuilder();
        for (JsonNode part : a.path("command")) {
          b.append(b.length() == 0 ? "" : " ").append(part.asText(""));
        }
        command = b.toString();
      } else if (a.path("command").isTextual()) {
        command = a.path("command").asText();
      }
      boolean escalated = "require_escalated".equals(a.path("sandbox_permissions").asText(null))
          || a.path("with_escalated_permissions").asBoolean(false);
      String why = a.path("justification").isTextual() ? a.path("justification").asText() : null;
      return new Arguments(command, escalated, why);
    }
  }

  /** The events of one record of {@code call}: its agent, command, thread as session, turn as task. */
  static ToolCall toolCall(SourceLine where, Attribution.Attributed who, CodexThreads.Thread t, CodexThreads.Call c) {
    return toolCall(where, who, t, c, null);
  }

  /** As above, the events at {@code at}: the record's own time (null: none). */
  static ToolCall toolCall(SourceLine where, Attribution.Attributed who, CodexThreads.Thread t, CodexThreads.Call c,
      java.time.Instant at) {
    String session = Attribution.grainId(t.id);
    String commandText = c.command == null ? null : Redactor.safe(c.command, Sanitize.MAX_COMMAND_CHARS);
    String agent = who.agentId();
    return new ToolCall(where, c.commandId, b -> {
      b.agentId(agent).commandId(c.commandId).source(CodexFormat.NAME).sessionId(session).taskId(c.turn)
          .commandText(commandText);
      if (at != null) {
        b.observedAt(at);
      }
    },
        c.counted, ToolCall.Ids.of(CodexFormat.NAME, agent, t.id, c.callId));
  }

  /** An event id of the thread that no call names (a proxy refusal counted at the turn), from what it is about. */
  static String id(String agent, String thread, String about) {
    return ToolCall.Ids.of(CodexFormat.NAME, agent, thread, "-").of(about, 0);
  }

  /** The call's command text and its request to leave the sandbox, as the model gave them. */
  static void arguments(ToolCall call, CodexThreads.Call c) {
    call.commandText(c.command);
    if (c.escalated) {
      String why = c.justification == null ? "" : ": " + Sanitize.text(c.justification, 300);
      call.add(ViolationEvent.EVIDENCE_COMMAND, "escape:request", b -> b.kind(Kind.PROCESS)
          .action(ViolationEvent.SANDBOX_OFF_REQUEST).reason("the call asks to run outside the sandbox (require_escalated)" + why));
    }
  }

  /** The escalated call was let out: it ran outside the sandbox. */
  static void approved(ToolCall call, String evidence, String by) {
    call.add(evidence, "escape:approved", b -> b.kind(Kind.PROCESS).action(ViolationEvent.SANDBOX_OFF_APPROVED)
        .reason("approved by " + Sanitize.text(by, 64) + ": it ran outside the sandbox"));
  }

  /**
   * The refusals {@code output} tells; true when it shows a sandbox that could not start (said once
   * per thread, its words no refusal of the wall's).
   */
  static boolean output(ToolCall call, CodexThreads.Thread t, String output) {
    if (output == null || output.isEmpty()) {
      return false;
    }
    Matcher broken = UNAVAILABLE.matcher(output);
    boolean unavailable = broken.find();
    if (unavailable && !t.unavailableSaid) {
      t.unavailableSaid = true;
      String words = Sanitize.text("bwrap: " + broken.group(1).strip(), 240);
      call.add(ViolationEvent.EVIDENCE_OUTPUT, "sandbox:unavailable", b -> b.kind(Kind.PROCESS)
          .action(ViolationEvent.SANDBOX_UNAVAILABLE).reason("the sandbox could not start (" + words + ")"));
    }
    call.output(output, t.cwd);
    return unavailable;
  }

  /** The sandbox denied the call (codex.sandbox_outcome) and nothing else of it names what: one refusal, target unknown. */
  static void denied(ToolCall call, CodexThreads.Call c) {
    if (c.counted.stream().anyMatch(k -> k.startsWith("net:") || k.startsWith("fs:"))) {
      return;
    }
    call.add(ViolationEvent.EVIDENCE_SANDBOX, "sandbox:denied", b -> b.kind(Kind.PROCESS).action(SANDBOX_DENIED)
        .targetUnknown(true).reason("the sandbox denied the call (codex.sandbox_outcome denied); its output names no"
            + " target"));
  }

  /** The network proxy's refusal ({@code codex.network_proxy.policy_decision}), as the event fills it. */
  record ProxyRefusal(String host, Integer port, String method, String protocol, String why) {

    String action() {
      return switch (protocol == null ? "" : protocol) {
        case "https_connect" -> "http-connect";
        case "socks5_tcp", "socks5_udp" -> "socks-tunnel";
        default -> "http-request";
      };
    }

    boolean knownHost() {
      return host != null && ProxyWords.isHost(host);
    }

    void fill(ViolationEvent.Builder b) {
      b.kind(Kind.NETWORK).action(action()).method(method).reason(Sanitize.text(why, Sanitize.MAX_TEXT_CHARS));
      if (knownHost()) {
        b.host(host).port(port).addressClass(HostClassifier.classify(host).orElse(null));
      } else {
        b.targetUnknown(true);
      }
    }
  }
}
