package dev.knockwatch.events.export;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.EventSources;
import dev.knockwatch.events.IsoInstant;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.ViolationEvent;
import java.util.Locale;

/**
 * knockwatch's events and alerts in Elastic Common Schema (8.x) field names, pure: a refusal is
 * {@code event.kind: event}, {@code event.category: network} (or {@code file}, {@code process}),
 * {@code event.type: denied}, {@code event.outcome: failure}; an alert is {@code event.kind:
 * alert} with {@code rule.*}. What ECS has no field for is under {@code labels} (commandId,
 * agentId, role).
 */
public final class Ecs {

  public static final String VERSION = "8.11.0";

  private Ecs() {}

  public static ObjectNode event(ViolationEvent e) {
    ObjectNode o = Json.MAPPER.createObjectNode();
    if (e.observedAt() != null) {
      o.put("@timestamp", IsoInstant.format(e.observedAt()));
    }
    o.putObject("ecs").put("version", VERSION);
    ObjectNode event = o.putObject("event");
    event.put("kind", "event");
    event.putArray("category").add(category(e.kind()));
    // a harness's record of a call that asked for no sandbox is no refusal: what it was is all that is known
    // and what a wall in audit mode let through, logging it, is allowed: it succeeded
    event.putArray("type").add(e.sandboxOff() ? "info" : e.unenforced() ? "allowed" : "denied");
    event.put("outcome", e.unenforced() ? "success" : "failure");
    Ocsf.put(event, "action", e.action());
    Ocsf.put(event, "id", e.eventId());
    Ocsf.put(event, "reason", e.reason());
    if (e.ingestedAt() != null) {
      event.put("ingested", IsoInstant.format(e.ingestedAt()));
    }
    event.put("dataset", "knockwatch.violations");
    event.put("module", "knockwatch");
    Ocsf.put(event, "provider", e.source());
    if (e.host() != null || e.port() != null) {
      ObjectNode dst = o.putObject("destination");
      if (e.host() != null) {
        dst.put(Ocsf.isIp(e.host()) ? "ip" : "domain", e.host());
      }
      if (e.port() != null) {
        dst.put("port", e.port());
      }
    }
    if (e.url() != null) {
      o.putObject("url").put("original", e.url());
    }
    if (e.sourceAddress() != null || e.sourcePort() != null) {
      ObjectNode src = o.putObject("source");
      Ocsf.put(src, "ip", e.sourceAddress());
      if (e.sourcePort() != null) {
        src.put("port", e.sourcePort());
      }
    }
    if (e.protocol() != null) {
      o.putObject("network").put("transport", e.protocol());
    }
    if (e.method() != null) {
      o.putObject("http").putObject("request").put("method", e.method());
    }
    if (e.path() != null) {
      ObjectNode file = o.putObject("file");
      file.put("path", e.path());
      Ocsf.put(file, "target_path", e.newPath());
    }
    if (e.commandText() != null || e.pid() != null) {
      ObjectNode process = o.putObject("process");
      Ocsf.put(process, "command_line", e.commandText());
      if (e.pid() != null) {
        process.put("pid", e.pid());
      }
    }
    if (e.errno() != null) {
      o.putObject("error").put("code", e.errno());
    }
    if (e.origin() != null && e.origin().ingestHost() != null) {
      o.putObject("host").put("hostname", e.origin().ingestHost());
    }
    o.putObject("observer").put("product", "knockwatch").put("type", "sandbox");
    labels(o, e.commandId(), e.agentId(), e.role());
    EventSources.named(e.source()).ifPresent(s -> s.ecs(e, o));
    return o;
  }

  public static ObjectNode alert(Alert a) {
    ObjectNode o = Json.MAPPER.createObjectNode();
    if (a.lastSeen() != null) {
      o.put("@timestamp", IsoInstant.format(a.lastSeen()));
    }
    o.putObject("ecs").put("version", VERSION);
    ObjectNode event = o.putObject("event");
    event.put("kind", "alert");
    event.putArray("category").add("intrusion_detection");
    event.putArray("type").add(a.status() == Alert.Status.RESOLVED ? "end" : "info");
    event.put("id", a.fingerprint());
    event.put("severity", switch (a.severity()) {
      case INFO -> 21;
      case WARNING -> 47;
      case PAGE -> 73;
      case CRITICAL -> 99;
    });
    if (a.firstSeen() != null) {
      event.put("start", IsoInstant.format(a.firstSeen()));
    }
    if (a.status() == Alert.Status.RESOLVED && a.lastSeen() != null) {
      event.put("end", IsoInstant.format(a.lastSeen()));
    }
    event.put("dataset", "knockwatch.alerts");
    event.put("module", "knockwatch");
    Ocsf.put(o, "message", a.summary());
    ObjectNode rule = o.putObject("rule").put("name", a.rule()).put("id", a.rule());
    if (a.meta() != null && a.meta().runbook() != null) {
      rule.put("reference", a.meta().runbook());
    }
    if (a.meta() != null && !a.meta().tags().isEmpty()) {
      a.meta().tags().forEach(o.withArray("tags")::add);
    }
    o.putObject("observer").put("product", "knockwatch").put("type", "sandbox");
    ObjectNode labels = labels(o, a.commandId(), a.agentId(), a.role());
    labels.put("severity", a.severity().name().toLowerCase(Locale.ROOT));
    labels.put("status", a.status().name().toLowerCase(Locale.ROOT));
    return o;
  }

  private static String category(Kind kind) {
    if (kind == null) {
      return "network";
    }
    return switch (kind) {
      case FILESYSTEM -> "file";
      case PROCESS -> "process";
      default -> "network";
    };
  }

  private static ObjectNode labels(ObjectNode o, String commandId, String agentId, String role) {
    ObjectNode labels = o.putObject("labels");
    Ocsf.put(labels, "command_id", commandId);
    Ocsf.put(labels, "agent_id", agentId);
    Ocsf.put(labels, "role", role);
    return labels;
  }
}
