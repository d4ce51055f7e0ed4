package dev.knockwatch.events;

import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The key an event travels, is counted and is found under (the violations topic, the timeline,
 * the query API): its command id, or, where its wall names no command, the finest grain it
 * names — {@code session:AGENT/SESSION} (a session or sandbox) or {@code agent:AGENT}, the keys
 * the rules of those grains count by. No command id holds {@code /}, and no wall's key is a command
 * id that a layout or a claim could give, since each starts with its grain and a colon
 * (docs/ARCHITECTURE.md, "Events that name no command").
 */
public final class EventKey {

  public static final String AGENT = "agent:";
  public static final String SESSION = "session:";
  private static final Pattern GRAIN_ID = Pattern.compile("[A-Za-z0-9_.:-]{1,128}");

  private EventKey() {}

  /** The key of {@code e}: its command id; where it has none and its wall names none, its agent's or session's. */
  public static String of(ViolationEvent e) {
    if (e.commandId() != null || !Boolean.TRUE.equals(e.commandUnknown())) {
      return e.commandId();
    }
    String agent = e.agentId() == null ? "-" : e.agentId();
    return e.sessionId() != null ? SESSION + agent + "/" + e.sessionId() : AGENT + agent;
  }

  /** Whether {@code key} is a wall's (an agent's or a session's), not a command's. */
  public static boolean namesNoCommand(String key) {
    return key != null && (key.startsWith(AGENT) || key.startsWith(SESSION));
  }

  /** What is wrong with {@code key} as a key to look up; empty when it is a command id or a wall's key. */
  public static Optional<String> problem(String key) {
    if (key != null && key.startsWith(AGENT)) {
      return AgentId.problem(key.substring(AGENT.length())).map(p -> "not an agent's key: " + p);
    }
    if (key != null && key.startsWith(SESSION)) {
      String rest = key.substring(SESSION.length());
      int slash = rest.indexOf('/');
      if (slash < 0) {
        return Optional.of("a session's key is session:AGENT/SESSION");
      }
      Optional<String> agent = AgentId.problem(rest.substring(0, slash));
      if (agent.isPresent()) {
        return Optional.of("not a session's key: " + agent.get());
      }
      return GRAIN_ID.matcher(rest.substring(slash + 1)).matches() ? Optional.empty()
          : Optional.of("not a session's key: the session is 1-128 of [A-Za-z0-9_.:-]");
    }
    return CommandId.problem(key);
  }
}
