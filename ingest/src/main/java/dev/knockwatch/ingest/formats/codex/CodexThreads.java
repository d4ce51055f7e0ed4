package dev.knockwatch.ingest.formats.codex;

import dev.knockwatch.events.CommandId;
import dev.knockwatch.events.Hashes;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What one reader (an exporter's records, or one rollout file) knows of Codex's threads, bounded:
 * each thread's turn, its calls (their command text, whether they asked to leave the sandbox, what
 * was decided, the targets counted), the calls open (decided, no result yet) and the proxy's
 * refusals not tied to a call.
 *
 * <p>A turn is named by its first call's command id, in both records: OpenTelemetry names no turn
 * (its events carry the thread, {@code conversation.id}, and the call), so a turn there is what
 * follows a {@code codex.user_prompt}, and a rollout's turn ({@code task_started}) is named the same
 * way, so that both count one turn under one key.
 */
final class CodexThreads {

  static final int MAX_THREADS = 256;
  static final int MAX_CALLS = 256;
  static final int MAX_UNTIED = 64;

  private final Map<String, Thread> threads = lru(MAX_THREADS);

  Thread thread(String id) {
    return threads.computeIfAbsent(id, Thread::new);
  }

  /** A call's command id: Codex's call id where it is a valid one, else one made of the thread and the call id. */
  static String commandIdOf(String thread, String callId) {
    return CommandId.isValid(callId) ? callId : "codex-" + Hashes.sha256Hex(thread + "\u0000" + callId, 12);
  }

  static final class Thread {
    final String id;
    /** The current turn's name (its first call's command id); null until that call. */
    String turn;
    /** A turn began whose first call is still to come. */
    boolean turnStarting = true;
    String cwd;
    boolean unavailableSaid;
    final Map<String, Call> calls = lru(MAX_CALLS);
    /** Calls decided and not yet ended, in order (OpenTelemetry: a proxy's refusal falls in one of them). */
    final Set<String> open = new LinkedHashSet<>();
    /** Which call an execution (the proxy's {@code execution.id}) belongs to. */
    final Map<String, String> executions = lru(MAX_CALLS);
    /** Proxy refusals counted at the turn, not tied to a call: a later call's output naming their host is them. */
    final List<Untied> untied = new ArrayList<>();

    Thread(String id) {
      this.id = id;
    }

    /** A new turn: its name comes with its first call. */
    void newTurn() {
      turnStarting = true;
      untied.clear();
    }

    /** The call of this id, begun now if it is new (the first of a new turn names the turn). */
    Call call(String callId) {
      Call c = calls.get(callId);
      if (c == null) {
        c = new Call(callId, commandIdOf(id, callId));
        if (turnStarting || turn == null) {
          turn = c.commandId;
          turnStarting = false;
        }
        c.turn = turn;
        calls.put(callId, c);
      }
      return c;
    }
  }

  static final class Call {
    final String callId;
    final String commandId;
    String turn;
    String command;
    boolean escalated;
    String justification;
    /** codex.tool_decision's {@code decision} and {@code source}: who let it run. */
    String decision;
    String decidedBy;
    /** codex.sandbox_outcome said {@code denied}. */
    boolean denied;
    final Set<String> counted = new HashSet<>();

    Call(String callId, String commandId) {
      this.callId = callId;
      this.commandId = commandId;
    }

    boolean approved() {
      return decision != null && decision.startsWith("approved");
    }
  }

  /** A proxy refusal counted at the turn: its host, and the turn it was counted in. */
  record Untied(String host, String turn) {}

  static <K, V> Map<K, V> lru(int max) {
    return new LinkedHashMap<>(16, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<K, V> eldest) {
        return size() > max;
      }
    };
  }
}
