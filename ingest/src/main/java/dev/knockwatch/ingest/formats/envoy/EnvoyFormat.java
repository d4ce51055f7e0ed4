package dev.knockwatch.ingest.formats.envoy;

import dev.knockwatch.events.config.Key;
import dev.knockwatch.ingest.spi.FileOptions;
import dev.knockwatch.ingest.spi.Identities;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.WallFormat;
import java.util.List;
import java.util.Set;

/**
 * Envoy as an egress proxy: its access log, where its RBAC filters' refusals carry
 * {@code rbac_access_denied_matched_policy[POLICY]} in {@code %RESPONSE_CODE_DETAILS%} (a request)
 * or {@code %CONNECTION_TERMINATION_DETAILS%} (a connection). Three shapes, told apart by each
 * line: a {@code json_format} with Istio's field names, Istio's text format, Envoy's default format
 * (which has no details, so it yields nothing). A line names no command: the source's
 * {@code agents} map the downstream peer (its certificate's URI SAN or subject, its address) to an
 * agent.
 */
public final class EnvoyFormat implements WallFormat {

  public static final String NAME = "envoy";

  static final Key<Identities> AGENTS = Identities.key(List.of("uri_san", "subject", "source"), Set.of("source"));

  @Override
  public String wireName() {
    return NAME;
  }

  @Override
  public String summary() {
    return "Envoy's access log as an egress proxy's (Envoy 1.37, Istio 1.30): the refusals of its RBAC filters,"
        + " `rbac_access_denied_matched_policy[POLICY]` in `%RESPONSE_CODE_DETAILS%` (the HTTP filter's 403) or"
        + " `%CONNECTION_TERMINATION_DETAILS%` (the network filter's close). Each line is read as a `json_format` object"
        + " with Istio's field names (plus `downstream_peer_uri_san`, `downstream_peer_subject`) when it starts with"
        + " `{`, else as Istio's text format, else as Envoy's default format, which names no details and yields"
        + " nothing. A line names no command, so the source's `agents` map the downstream peer to an agent";
  }

  @Override
  public List<Key<?>> keys() {
    return List.of(AGENTS);
  }

  @Override
  public LineParser parser(FileOptions options) {
    return new EnvoyParser(WallFormat.agents(options, AGENTS));
  }

  @Override
  public List<Skip> skips() {
    return List.of(
        new Skip("allowed", "a request or connection no RBAC filter refused (its details name no `rbac_access_denied`,"
            + " its status is no 403): passed on, or answered by the upstream or another filter"),
        new Skip("not-rbac", "a 403 whose `%RESPONSE_CODE_DETAILS%` names no RBAC filter (`via_upstream`: the"
            + " upstream's own 403, `ext_authz_denied`, ...): no refusal of Envoy's RBAC"),
        new Skip("no-details", "a 403, or a TCP connection's line, in a format without `%RESPONSE_CODE_DETAILS%`"
            + " (Envoy's default format string, a `json_format` with no `response_code_details`): the RBAC filter's 403"
            + " looks as the upstream's, a connection the network filter closed as one that ended; add"
            + " `response_code_details` and `connection_termination_details` to the log format"));
  }

  @Override
  public String yields() {
    return "each line whose `response_code_details` or `connection_termination_details` is"
        + " `rbac_access_denied_matched_policy[POLICY]`: `commandUnknown`, the agent the source maps the downstream peer"
        + " to, the host and port of `:authority` (else of the TLS SNI, `requested_server_name`; `targetUnknown` when"
        + " neither) as `host`/`port`, the action `http-request` (the `url` redacted: the path where absolute, else"
        + " `//AUTHORITY/PATH`), `http-connect` for a CONNECT, `connect` for a connection the network filter closed,"
        + " the peer's address as `sourceAddress`/`sourcePort`, POLICY as `reason` (`none`: an ALLOW policy matched"
        + " nothing), and who Envoy refused as `subject` (`san=…`, else `subject=…`, else `src=…`); a peer no entry"
        + " maps is rejected (`unmapped-identity`)";
  }

  @Override
  public Trust trust() {
    return new Trust("Envoy, the egress proxy, outside the sandbox: each line's structure, its status, its response"
        + " code and connection termination details, the peer's address (the TCP peer, or what"
        + " `use_remote_address`/`xff_num_trusted_hops` let a header set) and certificate URI SAN and subject (the TLS"
        + " handshake verified them), the time",
        "who: the agent the source's `agents` map the peer's certificate URI SAN, subject or address to; the command is"
            + " unknown. Only the RBAC filters' details are refusals: Envoy writes them, and a 403 without them is"
            + " never taken for one",
        "the method, the path, `:authority`, the SNI, the User-Agent, X-Forwarded-For and X-Request-Id: in"
            + " `json_format` Envoy escapes them; in a text format it writes them unescaped, so a quote in one makes the"
            + " line unreadable (rejected), and the path, which holds no space, cannot reach the details");
  }
}
