package dev.knockwatch.streams.rules;

import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.events.config.Key;
import java.util.List;
import java.util.Locale;

/**
 * What a rule counts and groups by ({@code per:} in rules.yaml): the command (a tool call, an srt
 * command), the task (one user prompt of a harness session: Claude Code's {@code prompt_id}), the
 * session, or the agent. A model's retry is a new tool call, so "kept going after it was refused"
 * shows at the task's grain. An event with no task is its own command's task, one with no session
 * its own command's session: srt, Squid and strace refusals count per command whatever the grain
 * but {@code agent}.
 */
public enum Grain {
  COMMAND, TASK, SESSION, AGENT;

  /** {@code per}: what a rule counts and groups by. Every detector whose state or alerts a task could share takes it. */
  public static final Key<Grain> PER = Key.oneOf("per", List.of(values()), Grain::wireName, COMMAND,
      "what the rule counts and raises one alert per: a tool call's command, the task (one prompt), the session, the agent");

  public String wireName() {
    return name().toLowerCase(Locale.ROOT);
  }

  public static Grain ofWireName(String name) {
    for (Grain g : values()) {
      if (g.wireName().equals(name)) {
        return g;
      }
    }
    return null;
  }

  /**
   * The key {@code e}'s state and alert are kept under at this grain: the command id itself for
   * {@code command}, and for a refusal with no task (or session) at those grains, so that its
   * state and its alerts are the command's own, as before grains; else the grain's name and its
   * parts ({@code :} and {@code /} occur in no command id).
   */
  public String keyOf(String commandId, ViolationEvent e) {
    String agent = e.agentId() == null ? "-" : e.agentId();
    return switch (this) {
      case COMMAND -> commandId;
      case TASK -> e.taskId() == null ? commandId
          : "task:" + agent + "/" + (e.sessionId() == null ? "-" : e.sessionId()) + "/" + e.taskId();
      case SESSION -> e.sessionId() == null ? commandId : "session:" + agent + "/" + e.sessionId();
      case AGENT -> "agent:" + agent;
    };
  }

  /** What the alert's summary calls one of these: "command", "task", "session", "agent". */
  public String noun() {
    return wireName();
  }
}
