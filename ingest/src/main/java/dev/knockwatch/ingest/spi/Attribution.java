package dev.knockwatch.ingest.spi;

import dev.knockwatch.events.AgentId;
import dev.knockwatch.events.CommandId;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.events.ViolationEvent.IdentityClaim;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * Whose refusal a line is: the one place ingest decides it, as docs/TRUST.md says.
 *
 * <ul>
 *   <li><b>agentId</b> is the log layout's (the directory the harness writes a command's logs
 *       in, or the source config's {@code {agentId}} / {@code fields}). A line's own agentId is a
 *       claim: it never chooses the agent, since the agent chooses the role, its allowlist and its
 *       exemptions. With no layout agent the event has none, and the default role.</li>
 *   <li><b>commandId</b> is the layout's (the file name, or the config's) where that is a valid
 *       id. Where the layout names no command (a shared proxy log, a file name that is no id) the
 *       line's claim is the only one, and is used.</li>
 *   <li>A claim that disagrees with the layout loses, and the event carries it as
 *       {@code identityConflict}: an agent claiming another identity is an incident.</li>
 *   <li>Every id used is valid (charset, length); a bad one refuses the line with its reason,
 *       and is never used as a path or as markup.</li>
 * </ul>
 */
public final class Attribution {

  private Attribution() {}

  /** The identity of one line's events, or why it has none. */
  public sealed interface Result permits Attributed, Refused {}

  /** @param conflict what the line claimed against the layout; null when it claimed nothing else */
  public record Attributed(String agentId, String commandId, IdentityClaim conflict) implements Result {
    public ViolationEvent.Builder applyTo(ViolationEvent.Builder b) {
      return b.agentId(agentId).commandId(commandId).identityConflict(conflict);
    }
  }

  /** @param identity where the refusal's wall knows who it refused but no agent is mapped: that identity, else null */
  public record Refused(Rejection code, String reason, String identity) implements Result {
    public Refused(Rejection code, String reason) {
      this(code, reason, null);
    }

    public Parsed parsed() {
      return new Parsed.Rejected(code, reason, null, identity);
    }
  }

  /**
   * The identity of a refusal by a wall that names no command (a firewall, a proxy of many
   * clients): the agent the source's mapping gives for what the wall knows ({@code knows}: its
   * attributes, e.g. {@code uid}, {@code source}), and no command. {@code identity} is how the wall
   * names who it refused ({@code uid=65534}): an identity no entry maps is refused, and its notice
   * (rule {@code ingest-rejects}) is keyed by the wall and that identity, so each pages once.
   */
  public static Result ofWall(String wall, String identity, Map<String, String> knows, Identities agents) {
    return refusedOrAttributed(wall, identity, agents.agentOf(knows));
  }

  /** As {@link #ofWall}, for a wall that knows several values of an attribute (a pod's labels). */
  public static Result ofWallAny(String wall, String identity, Map<String, List<String>> knows, Identities agents) {
    return refusedOrAttributed(wall, identity, agents.agentOfAny(knows));
  }

  private static Result refusedOrAttributed(String wall, String identity, Optional<String> agent) {
    if (agent.isEmpty()) {
      String who = Sanitize.text(wall + " " + identity, CommandId.MAX_LENGTH);
      return new Refused(Rejection.UNMAPPED_IDENTITY, "the source maps " + who + " to no agent: add it to its agents",
          who);
    }
    return new Attributed(agent.get(), null, null);
  }

  /**
   * @param claimedAgent the agentId the line names (null: none)
   * @param claimedCommand the commandId the line names, decoded (null: none)
   */
  public static Result of(SourceLine src, String claimedAgent, String claimedCommand) {
    return of(src.agentIdFromPath(), src.commandIdFromPath(), claimedAgent, claimedCommand);
  }

  /**
   * @param layoutAgent the agent the layout (or the operator's config) names; null when none
   * @param layoutCommand the command the layout names; one that is no valid id names none
   */
  public static Result of(String layoutAgent, String layoutCommand, String claimedAgent, String claimedCommand) {
    String agentConflict = null;
    if (layoutAgent != null) {
      Optional<String> problem = AgentId.problem(layoutAgent);
      if (problem.isPresent()) {
        return new Refused(Rejection.BAD_AGENT_ID, "the directory that names the agent is no agent id: "
            + problem.get());
      }
      if (claimedAgent != null && !claimedAgent.equals(layoutAgent)) {
        agentConflict = claim(claimedAgent);
      }
    }

    String commandId;
    String commandConflict = null;
    if (CommandId.isValid(layoutCommand)) {
      commandId = layoutCommand;
      if (claimedCommand != null && !claimedCommand.equals(layoutCommand)) {
        commandConflict = claim(claimedCommand);
      }
    } else {
      if (claimedCommand == null && layoutCommand != null) {
        return new Refused(Rejection.forCommandId(layoutCommand), CommandId.problem(layoutCommand).orElseThrow());
      }
      Optional<String> problem = CommandId.problem(claimedCommand);
      if (problem.isPresent()) {
        return new Refused(Rejection.forCommandId(claimedCommand), claimedCommand == null
            ? "commandId is missing: the line names none, and the log layout none" : problem.get());
      }
      commandId = claimedCommand;
    }
    IdentityClaim conflict = agentConflict == null && commandConflict == null ? null
        : new IdentityClaim(agentConflict, commandConflict);
    return new Attributed(layoutAgent, commandId, conflict);
  }

  private static final java.util.regex.Pattern GRAIN_ID = java.util.regex.Pattern.compile("[A-Za-z0-9_.:-]{1,128}");

  /**
   * A harness's session or task id (Claude Code's {@code session_id} and {@code prompt_id}, the srt
   * bridge's {@code --session} and {@code --task}) as events carry it; null when absent or no such
   * id ({@code /} and control bytes never reach a grain key).
   */
  public static String grainId(String id) {
    return id != null && GRAIN_ID.matcher(id).matches() ? id : null;
  }

  /** A claim as the event keeps it: agent-written text, made safe and bounded. */
  private static String claim(String claimed) {
    return Sanitize.text(Objects.requireNonNull(claimed), CommandId.MAX_LENGTH);
  }
}
