package dev.knockwatch.ingest.formats.ocsf;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.spi.FileOptions;
import dev.knockwatch.events.config.Key;
import dev.knockwatch.ingest.spi.Identities;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.WallFormat;
import java.util.List;
import java.util.Set;

/**
 * OCSF 1.x events as JSON lines, read generically: a Network Activity (4001) or HTTP Activity (4002)
 * event whose {@code action_id} is Denied or whose {@code disposition_id} is Blocked is a refusal.
 * NVIDIA OpenShell's sandbox supervisor writes them (its {@code openshell-ocsf.YYYY-MM-DD.log}); so does
 * any producer that exports OCSF. An event names no command: the source's {@code agents} map what the
 * producer knows of who was refused (the container, which OpenShell makes the sandbox; the device; the
 * actor's user; the source address) to an agent.
 */
public final class OcsfFormat implements WallFormat {

  public static final String NAME = "ocsf";

  static final String CONTAINER_NAME = "container.name";
  static final String CONTAINER_UID = "container.uid";
  static final String USER = "actor.user.name";
  static final String DEVICE = "device.hostname";
  static final String SOURCE_IP = "src_endpoint.ip";

  static final Key<Identities> AGENTS = Identities.key(
      List.of(CONTAINER_NAME, CONTAINER_UID, USER, DEVICE, SOURCE_IP), Set.of(SOURCE_IP));

  @Override
  public String wireName() {
    return NAME;
  }

  @Override
  public String summary() {
    return "OCSF 1.x events as JSON lines, read generically (NVIDIA OpenShell's `openshell-ocsf.*.log`, an OCSF"
        + " export of any other wall): each Network Activity (4001) or HTTP Activity (4002) event Denied or Blocked is a"
        + " refusal. An event names no command, so the source's `agents` map who the producer says was refused (its"
        + " `container`, `device`, actor's user or source address) to an agent";
  }

  @Override
  public List<Key<?>> keys() {
    return List.of(AGENTS);
  }

  @Override
  public LineParser parser(FileOptions options) {
    return new OcsfParser(WallFormat.agents(options, AGENTS));
  }

  @Override
  public List<Skip> skips() {
    return List.of(
        new Skip("not-json", "a line that is no JSON object: OpenShell's human form (`openshell.*.log`) or another"
            + " log's text in the file"),
        new Skip("other-class", "an event of another class than Network Activity and HTTP Activity (OpenShell's"
            + " process, SSH, configuration and lifecycle events): no refused connection"),
        new Skip("finding", "a Detection Finding (2004): a producer's judgement of activity it records as events of"
            + " its own (OpenShell's Proxy Bypass Detected comes with the Network Activity Refuse of the same"
            + " connection, which is read as the direct dial), so reading it too would count one knock twice"),
        new Skip("allowed", "an event neither Denied (`action_id` 2) nor Blocked (`disposition_id` 2): an allowed"
            + " connection or request, or one whose outcome the producer does not say"));
  }

  @Override
  public String yields() {
    return "each Denied or Blocked Network Activity or HTTP Activity event: `commandUnknown`, the agent the source maps"
        + " the producer's identity to, `dst_endpoint` (`domain`, else `hostname`, else `ip`; else the request URL's)"
        + " as `host`/`port` (`targetUnknown` when it names none), `http-request` (or `http-connect` for a CONNECT) for"
        + " HTTP Activity, `connect` for a Network Activity Refuse (a dial refused below any proxy: OpenShell's bypass"
        + " monitor), `network-outbound` for another Network Activity, `http_request.http_method` as `method`, the URL"
        + " as `url`, `status_detail` (else `message`, else `firewall rule` and `firewall_rule.name`) as `reason`, `src_endpoint` as `sourceAddress`/`sourcePort`,"
        + " `actor.process` `pid` and `cmd_line` as `pid` and `commandText`, and who the producer refused as"
        + " `subject` (`container=…`, else `container.uid=…`, `user=…`, `device=…`, `src=…`), the container's name"
        + " (else its uid) as `sessionId`: the sandbox, whose refusals rules per command, task or session count under"
        + " `session:AGENT/SANDBOX` (a name outside 1-128 of `[A-Za-z0-9_.:-]` gives none); an identity no entry maps"
        + " is rejected (`unmapped-identity`). The producer's record itself, made safe (each string sanitized, redacted"
        + " and bounded; at most 8 KB), is kept as `producer`: the OCSF export gives it back whole, as `unmapped.producer`";
  }

  /**
   * The producer's own record, whole, as {@code unmapped.producer}: every field it wrote (its class,
   * activity and outcome, its metadata and event id, the process and its parents, the firewall rule,
   * the container), made safe by ingest ({@link ProducerRecord}). The record around it is
   * knockwatch's, of one OCSF version ({@code Ocsf.VERSION}) whatever version the producer writes
   * (OpenShell writes 1.8.0): {@code unmapped} is OCSF's place for what a record's class does not map.
   */
  @Override
  public void ocsf(ViolationEvent e, ObjectNode record) {
    ObjectNode producer = ProducerRecord.read(e.producer());
    if (producer != null) {
      (record.get("unmapped") instanceof ObjectNode u ? u : record.putObject("unmapped")).set("producer", producer);
    }
  }

  @Override
  public Trust trust() {
    return new Trust("the producer, outside the sandbox (OpenShell's supervisor, its proxy and its nftables bypass"
        + " monitor): each line's structure, `class_uid`, `action_id`, `disposition_id`, `status_detail`, `time`,"
        + " `container` and `device` (OpenShell's sandbox context), `src_endpoint` (the TCP peer) and `actor.user`",
        "who: the agent the source's `agents` map the container's name or uid, the device's hostname, the actor's"
        + " user or the source address to, the sandbox (the session) its container's name; the command is unknown."
        + " The producer's word is as good as the producer:"
        + " a file the agent can write is the agent's word",
        "the destination (`dst_endpoint`, the request's URL and method), the process OpenShell read from /proc"
        + " (`actor.process` `name`, `cmd_line`, parents) and what `message` and `status_detail` quote of them;"
        + " the producer writes them JSON-escaped, so they can add no field and no line");
  }
}
