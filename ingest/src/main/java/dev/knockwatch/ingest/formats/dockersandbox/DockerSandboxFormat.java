package dev.knockwatch.ingest.formats.dockersandbox;

import dev.knockwatch.events.config.Key;
import dev.knockwatch.ingest.spi.FileOptions;
import dev.knockwatch.ingest.spi.Identities;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.WallFormat;
import java.util.List;
import java.util.Set;

/**
 * Docker Sandboxes ({@code sbx}): the audit records its daemon writes as JSON Lines, one a policy
 * decision or a session's event, in {@code audit-<utc>-<uuid>-<seq>.jsonl} files under its
 * {@code auditkit} directory. A decision names no command and no sandbox: the source's
 * {@code agents} map what the daemon knows of it (the signed-in Docker user, the AI agent, the
 * machine) to an agent.
 */
public final class DockerSandboxFormat implements WallFormat {

  public static final String NAME = "dockersandbox";

  /** The record's {@code agent} is the attribute {@code ai_agent}: an entry's {@code agent} names knockwatch's agent. */
  static final Key<Identities> AGENTS = Identities.key(List.of("username", "user_email", "ai_agent", "hostname"), Set.of());

  @Override
  public String wireName() {
    return NAME;
  }

  @Override
  public String summary() {
    return "Docker Sandboxes' (`sbx`) audit records: the JSON Lines its daemon writes, one a policy decision or a session's"
        + " event, in `audit-<utc>-<uuid>-<seq>.jsonl` files (a source's `path` glob picks them, never the `.tmp` file"
        + " being written). A decision names no command and no sandbox, so the source's `agents` map the signed-in"
        + " Docker user, the AI agent and the machine the daemon names to an agent. `sbx policy log --json` is not read:"
        + " Docker documents no shape for it";
  }

  @Override
  public List<Key<?>> keys() {
    return List.of(AGENTS);
  }

  @Override
  public LineParser parser(FileOptions options) {
    return new DockerSandboxParser(WallFormat.agents(options, AGENTS));
  }

  @Override
  public List<Skip> skips() {
    return List.of(
        new Skip("management", "a record of the daemon itself (`AUDIT_CATEGORY_MANAGEMENT`: a session's start or end,"
            + " a policy sync, a configuration change): no decision"),
        new Skip("execution", "the outcome of an action after it was evaluated (`AUDIT_CATEGORY_EXECUTION`): its"
            + " decision is a record of its own"),
        new Skip("allowed", "a decision that allowed the action (`AUDIT_DECISION_ALLOW`)"),
        new Skip("approval-required", "a request the policy holds for a user's approval"
            + " (`AUDIT_DECISION_APPROVAL_REQUIRED`): Docker blocks it and asks the user; the answer, not the policy,"
            + " decides it"),
        new Skip("approval-answer", "a user's answer to a held request (`AUDIT_DECISION_APPROVAL_ALLOW`,"
            + " `AUDIT_DECISION_APPROVAL_DENY`)"),
        new Skip("other-action", "a denial of something other than network egress (a mount, an MCP tool, resource,"
            + " prompt or server): not a refusal knockwatch has a kind for"));
  }

  @Override
  public String yields() {
    return "each denial of network egress (`\"decision\":\"AUDIT_DECISION_DENY\"`, `action_type` `network_egress` or"
        + " `http_request`, enforced or with governance off): `commandUnknown`, the agent the source maps the record's"
        + " `username`, `user_email`, `agent` (as `ai_agent`) and `hostname` to, the host and port (`resource_id`, or the"
        + " `http_request` payload's; `targetUnknown` when neither names them unambiguously), `network-outbound` or"
        + " `http-request` as the `action` (an HTTP request's method and path as `method` and `url`, the connection's"
        + " `network_egress.protocol` as `protocol`), `deny_reason`'s phrases as `reason`, `timestamp` as the time, and"
        + " who Docker refused as `subject` (`username=… agent=…`); a record no entry maps is rejected"
        + " (`unmapped-identity`). A denial under `\"enforcement_mode\":\"audit\"`, which Docker recorded and did"
        + " not enforce, is the same event with `enforced: false`: no refusal, only the `drift` rules read it";
  }

  @Override
  public Trust trust() {
    return new Trust("the Docker Sandboxes daemon on the host, outside the sandbox's microVM: each record's structure,"
        + " `category`, `decision`, `enforcement_mode`, `action_type`, `timestamp`, the signed-in Docker user"
        + " (`username`, `user_email`, resolved when the daemon starts), the AI agent it runs (`agent`) and the machine"
        + " (`hostname`)",
        "who: the agent the source's `agents` map the record's `username`, `user_email`, `agent` (the attribute"
            + " `ai_agent`) or `hostname` to; the command and the sandbox are unknown (the records name neither), so the"
            + " sandboxes one user runs with one agent on one machine are one agent",
        "the destination it asked for (`resource_id`, the `http_request` payload's host, port, method and path) and what"
            + " `deny_reason` quotes of it; the daemon writes them as JSON strings, so they can add no field and no"
            + " line");
  }
}
