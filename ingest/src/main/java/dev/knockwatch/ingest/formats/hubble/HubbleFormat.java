package dev.knockwatch.ingest.formats.hubble;

import dev.knockwatch.events.config.Key;
import dev.knockwatch.ingest.spi.FileOptions;
import dev.knockwatch.ingest.spi.Identities;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.WallFormat;
import java.util.List;
import java.util.Set;

/**
 * Cilium's Hubble flows as JSON lines: {@code hubble observe -o json} and the Cilium agent's flow
 * exporter ({@code /var/run/cilium/hubble/events.log}) both write one {@code GetFlowsResponse} /
 * {@code ExportEvent} a line, a flow under {@code flow}; the CLI's legacy output writes the flow
 * alone. A flow names no command: the source's {@code agents} map what Cilium knows of the pod that
 * sent the packet (its namespace, pod name, labels, security identity, address) to an agent.
 */
public final class HubbleFormat implements WallFormat {

  public static final String NAME = "hubble";

  static final Key<Identities> AGENTS = Identities.key(
      List.of("namespace", "pod_name", "label", "identity", "source_ip"), Set.of("source_ip"));

  @Override
  public String wireName() {
    return NAME;
  }

  @Override
  public String summary() {
    return "Cilium Hubble flows as JSON lines (`hubble observe -o json`, the agent's flow exporter's events.log;"
        + " Cilium 1.19's flow.proto): each a packet Cilium forwarded, dropped or audited. A drop by network policy"
        + " names no command, so the source's `agents` map the sending pod (namespace, pod name, a label, its"
        + " security identity, its address) to an agent";
  }

  @Override
  public List<Key<?>> keys() {
    return List.of(AGENTS);
  }

  @Override
  public LineParser parser(FileOptions options) {
    return new HubbleParser(WallFormat.agents(options, AGENTS));
  }

  @Override
  public List<Skip> skips() {
    return List.of(
        new Skip("not-json", "a line that is no JSON object: `hubble`'s own messages and errors, a table or compact"
            + " output kept in the same file"),
        new Skip("other-event", "an exporter or `hubble observe` line that holds no flow (`node_status`,"
            + " `lost_events`, `agent_event`, `debug_event`)"),
        new Skip("forwarded", "a flow Cilium let through (`verdict` `FORWARDED`, `REDIRECTED`, `TRACED`,"
            + " `TRANSLATED`)"),
        new Skip("other-drop", "a packet Cilium dropped for another reason than network policy (`drop_reason_desc`"
            + " such as `CT_MAP_INSERTION_FAILED`, `INVALID_SOURCE_IP`, `STALE_OR_UNROUTABLE_IP`): no policy refused"
            + " anyone"),
        new Skip("other-verdict", "a flow with no verdict, `VERDICT_UNKNOWN` or `ERROR` (an error while Cilium"
            + " processed it), or a verdict this format does not know"));
  }

  @Override
  public String yields() {
    return "each flow dropped by network policy (`verdict` `DROPPED`, `drop_reason_desc` `POLICY_DENIED` or"
        + " `POLICY_DENY`; a policy-verdict event and the drop notification of the same packet are two flows, two"
        + " events, which detection counts as one: docs/RELIABILITY.md): `commandUnknown`, the agent the source maps the sending pod to, the destination's DNS name"
        + " (`destination_names`) or else its address as `host`, its port and the protocol (`l4`), `connect`,"
        + " `sendto` or `icmp` as the `action`, the sending address and port as `sourceAddress`/`sourcePort`, the"
        + " direction, drop reason and denying policies (`egress_denied_by`/`ingress_denied_by`) as `reason`, and who"
        + " Cilium refused as `subject` (`pod=NAMESPACE/POD`, else `identity=N`, else `src=ADDRESS`); a pod no"
        + " entry maps is rejected (`unmapped-identity`). A flow policy audit mode let through that enforcement"
        + " would have dropped (`verdict` `AUDIT`) is the same event with `enforced: false` and `AUDIT` as its"
        + " drop reason: no refusal, only the `drift` rules read it";
  }

  @Override
  public Trust trust() {
    return new Trust("Cilium's agent and datapath, outside the pod: each line's structure, `verdict`,"
        + " `drop_reason_desc`, the addresses and ports of the packet, `traffic_direction`, the endpoints' security"
        + " identity, namespace and pod name (from Kubernetes), the denying policies' names and the time",
        "who: the agent the source's `agents` map the sending pod's namespace, pod name, a label, security identity"
        + " or address to; the command is unknown. A label is as good as who may set it: a pod's own labels are"
        + " written by whoever may create or patch pods in its namespace, which an agent with Kubernetes"
        + " credentials may be; the namespace, the `k8s:io.kubernetes.pod.namespace` label and the identity are not"
        + " the pod's to choose",
        "the destination's DNS name (`destination_names`, what the pod's own DNS queries asked and Cilium's DNS proxy"
        + " saw answered), the pod name and labels where the agent can create pods, and the packet's ports; Hubble"
        + " writes them JSON-escaped, so they can add no field and no line");
  }
}
