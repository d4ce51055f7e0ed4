package dev.knockwatch.events;

/**
 * The agent ids knockwatch's own probes write under: the guard probes ({@code probe guard}, and
 * {@code up} every 10 minutes) and the limit probe's default. Their commands are test traffic: the
 * console and the lists mark them and leave them out unless asked. An agent cannot take these
 * names: the sandbox host, not the agent, names the log directories (docs/TRUST.md).
 */
public final class ProbeAgents {

  public static final String GUARD = "knockwatch-guard";
  public static final String LIMIT = "knockwatch-limit";

  private ProbeAgents() {}

  public static boolean is(String agentId) {
    return GUARD.equals(agentId) || LIMIT.equals(agentId);
  }
}
