package dev.knockwatch.ingest.formats.smokescreen;

import dev.knockwatch.events.AgentId;
import dev.knockwatch.events.config.Key;
import dev.knockwatch.ingest.spi.FileOptions;
import dev.knockwatch.ingest.spi.Identities;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.WallFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Stripe's smokescreen, an egress proxy: its {@code CANONICAL-PROXY-DECISION} log lines (logrus
 * JSON on its stderr), one a request it decided. A request names no command: the source's
 * {@code agents} map what smokescreen knows of the client (the role and project of its ACL, the
 * client certificate's CN and OU, the client's address) to an agent.
 */
public final class SmokescreenFormat implements WallFormat {

  public static final String NAME = "smokescreen";

  static final Key<Identities> AGENTS = Identities.key(
      List.of("role", "project", "inbound_remote_x509_cn", "inbound_remote_x509_ou", "inbound_remote_addr"),
      Set.of("inbound_remote_addr"));
  static final Key<String> AGENT_PER_ROLE = Key.of("agentPerRole", "an agent id's start", null, "none",
      "a refusal no `agents` entry maps, whose decision names a smokescreen `role`, is the agent this prefix and that"
          + " role make (`smokescreen-` and `webhooks`: `smokescreen-webhooks`), so that roles.yaml gives smokescreen's"
          + " roles knockwatch's (`match: \"smokescreen-*\"`); knockwatch's own probes' agents are never made so",
      (node, where) -> {
        String s = node.string(where + ": agentPerRole");
        if (s == null) {
          return null;
        }
        Optional<String> problem = AgentId.problem(s);
        if (problem.isPresent()) {
          node.problem(where + ": agentPerRole \"" + s + "\" does not start an agent id: " + problem.get());
          return null;
        }
        return s;
      });

  @Override
  public String wireName() {
    return NAME;
  }

  @Override
  public String summary() {
    return "Stripe's smokescreen egress proxy: its `CANONICAL-PROXY-DECISION` lines (logrus JSON on its stderr, v0.0.2 to"
        + " master), each a request it allowed or denied. A request names no command, so the source's `agents` map"
        + " the client smokescreen knows (its ACL `role` and `project`, the client certificate's CN and OU, its address)"
        + " to an agent";
  }

  @Override
  public List<Key<?>> keys() {
    return List.of(AGENTS, AGENT_PER_ROLE);
  }

  @Override
  public LineParser parser(FileOptions options) {
    return new SmokescreenParser(WallFormat.agents(options, AGENTS), options.get(AGENT_PER_ROLE));
  }

  @Override
  public List<Skip> skips() {
    return List.of(
        new Skip("not-json", "a line that is no JSON object: the text logger's line of a smokescreen that could not"
            + " start, a Go panic's trace, the usage message"),
        new Skip("other-message", "another of smokescreen's lines (`CANONICAL-PROXY-CN-CLOSE`, start-up, its own"
            + " errors): not a decision"),
        new Skip("allowed", "a decision that allowed the request (`\"allow\":true`)"),
        new Skip("failed", "an allowed request smokescreen could not complete (a lookup or a connection that failed:"
            + " an `error` and no denial), or an error before any decision logged at level `error`"));
  }

  @Override
  public String yields() {
    return "each denied decision (`\"allow\":false`, or a refusal before any decision: an `error` at level `warning`):"
        + " `commandUnknown`, the agent the source maps the client to, the requested host and port as `host`/`port`"
        + " (`targetUnknown` when smokescreen could not read one), `http-connect` or `http-request` as the `action`, the"
        + " client's address as `sourceAddress`/`sourcePort`, `decision_reason` as `reason`, and who smokescreen refused"
        + " as `subject` (`role=…`, else `cn=…`, else `src=…`); a client no entry maps is rejected (`unmapped-identity`)."
        + " A decision its role's `report` policy let through that `enforce` would have denied (`\"allow\":true`,"
        + " `\"enforce_would_deny\":true`) is the same event with `enforced: false`: no refusal, only the `drift` rules"
        + " read it";
  }

  @Override
  public Trust trust() {
    return new Trust("smokescreen, the egress proxy, outside the sandbox: each line's structure, `allow`,"
        + " `decision_reason`, `role` and `project` (its ACL's), the client certificate's CN and OU (the TLS handshake"
        + " verified them), the client's address (the TCP peer) and the time",
        "who: the agent the source's `agents` map the client's role, project, certificate CN or OU, or address to (or,"
        + " with `agentPerRole`, the one its role names); the command is unknown. A role is as good as smokescreen's"
        + " `RoleFromRequest`: the shipped one reads the client certificate's CN, and one that reads a header"
        + " (`X-Smokescreen-Role`) takes the client's word",
        "the requested host and port (`requested_host`), the headers it sent (`X-Smokescreen-Trace-ID` as `trace_id`,"
        + " a header a custom `RoleFromRequest` reads), and what `decision_reason` and `error` quote of them;"
        + " smokescreen writes them JSON-escaped, so they can add no field and no line");
  }
}
