package dev.knockwatch.probes.guard;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.knockwatch.events.Json;

/**
 * One guard probe's result: the object {@code probe guard --json} prints and the line written to
 * {@code <logs>/<agentId>/<commandId>.probe.jsonl}, which ingest publishes as a probe-result event
 * (a refused=false one raises wall-breach). {@code error} is set, and {@code refused} means
 * nothing, when the probe could not run at all; such a result is printed, never published.
 */
public record ProbeOutcome(String probe, String commandId, String agentId, String kind, String target, String command,
    String expected, String observed, boolean refused, String timestamp, String error) {

  public boolean ran() {
    return error == null;
  }

  public ObjectNode toJson() {
    ObjectNode o = Json.MAPPER.createObjectNode();
    o.put("probe", probe);
    o.put("commandId", commandId);
    o.put("expected", expected);
    o.put("observed", observed);
    if (ran()) {
      o.put("refused", refused);
    } else {
      o.putNull("refused");
      o.put("error", error);
    }
    o.put("kind", kind);
    o.put("target", target);
    o.put("command", command);
    o.put("timestamp", timestamp);
    o.put("agentId", agentId);
    return o;
  }
}
