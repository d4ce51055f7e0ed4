package dev.knockwatch.events.export;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.EventSources;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.ViolationEvent;
import java.time.Instant;
import java.util.Locale;

/**
 * knockwatch's events and alerts in OCSF 1.3.0, pure: a network refusal as Network Activity
 * (class 4001) and a filesystem refusal as File System Activity (1001), each with the Security
 * Control profile (the sandbox is the control: action Denied, disposition Blocked); an alert as a
 * Detection Finding (2004), created when it fires (each later firing record of it is the same
 * finding, by {@code finding_info.uid}) and closed when it resolves. What OCSF has no attribute for (commandId, agentId, role, the source
 * log) is under {@code unmapped}. Agent-written text is carried as ingest made it safe.
 */
public final class Ocsf {

  public static final String VERSION = "1.3.0";
  static final int NETWORK_ACTIVITY = 4001;
  static final int FILE_SYSTEM_ACTIVITY = 1001;
  /** A process the sandbox refused to start, or a harness's record of a call that asked for no sandbox. */
  static final int PROCESS_ACTIVITY = 1007;
  static final int LAUNCH = 1;
  static final int DETECTION_FINDING = 2004;
  /** Network Activity's activity: the connection was refused. */
  static final int REFUSE = 5;
  static final int ACTION_DENIED = 2;
  static final int DISPOSITION_BLOCKED = 2;
  /** What a wall in audit or report mode did with what its policy would refuse: let it through, and logged it. */
  static final int DISPOSITION_LOGGED = 17;
  /** Network Activity's activity: a report of traffic (what audit mode let through). */
  static final int TRAFFIC = 6;

  private Ocsf() {}

  /** The event as an OCSF record: Network Activity, or File System Activity for a filesystem refusal. */
  public static ObjectNode event(ViolationEvent e) {
    ObjectNode o = e.kind() == Kind.PROCESS ? process(e) : activity(e);
    EventSources.named(e.source()).ifPresent(s -> s.ocsf(e, o));
    if (e.unenforced()) {
      // a wall in audit or report mode: it let the activity through and logged what it would refuse
      o.put("status_id", 1);
      o.put("status", "Success");
      o.put("action_id", 1);
      o.put("action", "Allowed");
      o.put("disposition_id", DISPOSITION_LOGGED);
      o.put("disposition", "Logged");
      if (o.path("class_uid").asInt() == NETWORK_ACTIVITY && o.path("activity_id").asInt() == REFUSE) {
        o.put("activity_id", TRAFFIC);
        o.put("activity_name", "Traffic");
        o.put("type_uid", NETWORK_ACTIVITY * 100L + TRAFFIC);
      }
    }
    return o;
  }

  /** Network Activity, or File System Activity for a filesystem refusal: the common mapping. */
  private static ObjectNode activity(ViolationEvent e) {
    boolean file = e.kind() == Kind.FILESYSTEM;
    int classUid = file ? FILE_SYSTEM_ACTIVITY : NETWORK_ACTIVITY;
    int activity = file ? fileActivity(e.syscall() != null ? e.syscall() : e.action()) : REFUSE;
    ObjectNode o = Json.MAPPER.createObjectNode();
    o.put("category_uid", classUid / 1000);
    o.put("category_name", file ? "System Activity" : "Network Activity");
    o.put("class_uid", classUid);
    o.put("class_name", file ? "File System Activity" : "Network Activity");
    o.put("activity_id", activity);
    o.put("activity_name", file ? FILE_ACTIVITIES[activity] : "Refuse");
    o.put("type_uid", classUid * 100L + activity);
    o.put("severity_id", 1);
    o.put("severity", "Informational");
    o.put("time", millis(e.observedAt()));
    o.put("status_id", 2);
    o.put("status", "Failure");
    o.put("action_id", ACTION_DENIED);
    o.put("action", "Denied");
    o.put("disposition_id", DISPOSITION_BLOCKED);
    o.put("disposition", "Blocked");
    if (e.reason() != null) {
      o.put("message", e.reason());
    }
    ObjectNode meta = metadata(o);
    if (e.eventId() != null) {
      meta.put("uid", e.eventId());
    }
    if (e.ingestedAt() != null) {
      meta.put("logged_time", millis(e.ingestedAt()));
    }
    // the actor: the agent (the application that tried), and its command when the log says it
    ObjectNode actor = o.putObject("actor");
    put(actor, "app_name", e.agentId());
    if (e.commandText() != null || e.pid() != null) {
      ObjectNode process = actor.putObject("process");
      put(process, "cmd_line", e.commandText());
      if (e.pid() != null) {
        process.put("pid", e.pid());
      }
    }
    if (file) {
      ObjectNode f = o.putObject("file");
      String path = e.path() == null ? "" : e.path();
      f.put("name", path.substring(path.lastIndexOf('/') + 1));
      f.put("path", path);
      f.put("type_id", 0);
      if (e.newPath() != null) {
        // rename's, link's and symlink's second path: the file the call would have made
        ObjectNode r = o.putObject("file_result");
        r.put("name", e.newPath().substring(e.newPath().lastIndexOf('/') + 1));
        r.put("path", e.newPath());
        r.put("type_id", 0);
      }
      ObjectNode device = o.putObject("device");
      device.put("type_id", 0);
      if (e.origin() != null && e.origin().ingestHost() != null) {
        device.put("hostname", e.origin().ingestHost());
      }
    } else {
      ObjectNode dst = o.putObject("dst_endpoint");
      if (e.host() != null) {
        dst.put(isIp(e.host()) ? "ip" : "hostname", e.host());
      }
      if (e.port() != null) {
        dst.put("port", e.port());
      }
      if (e.url() != null) {
        o.putObject("url").put("url_string", e.url());
      }
      if (e.sourceAddress() != null || e.sourcePort() != null) {
        ObjectNode src = o.putObject("src_endpoint");
        put(src, "ip", e.sourceAddress());
        if (e.sourcePort() != null) {
          src.put("port", e.sourcePort());
        }
      }
      if (e.protocol() != null) {
        // an agent's refused attempt goes out
        o.putObject("connection_info").put("protocol_name", e.protocol()).put("direction_id", 2).put("direction", "Outbound");
      }
    }
    ObjectNode unmapped = o.putObject("unmapped");
    put(unmapped, "commandId", e.commandId());
    put(unmapped, "agentId", e.agentId());
    put(unmapped, "role", e.role());
    put(unmapped, "source", e.source());
    put(unmapped, "action", e.action());
    put(unmapped, "addressClass", e.addressClass() == null ? null : e.addressClass().name().toLowerCase(Locale.ROOT));
    put(unmapped, "proxyError", e.proxyError());
    put(unmapped, "errno", e.errno());
    put(unmapped, "syscall", e.syscall());
    put(unmapped, "timeSource", e.timeSource());
    if (Boolean.TRUE.equals(e.commandUnknown())) {
      unmapped.put("commandUnknown", true);
    }
    if (e.subject() != null) {
      ObjectNode subject = unmapped.putObject("subject");
      put(subject, "wall", e.subject().wall());
      put(subject, "identity", e.subject().identity());
    }
    return o;
  }

  /**
   * A process event as Process Activity (1007, Launch): a refused start (Denied, Blocked), or a
   * harness's record of a call that asked to run outside the sandbox ({@code sandbox-off-request},
   * {@code sandbox-off-unanswered}), whose outcome is not known (status, action and disposition
   * Unknown; the action word in {@code unmapped.action}).
   */
  private static ObjectNode process(ViolationEvent e) {
    boolean request = e.sandboxOff();
    ObjectNode o = Json.MAPPER.createObjectNode();
    o.put("category_uid", 1);
    o.put("category_name", "System Activity");
    o.put("class_uid", PROCESS_ACTIVITY);
    o.put("class_name", "Process Activity");
    o.put("activity_id", LAUNCH);
    o.put("activity_name", "Launch");
    o.put("type_uid", PROCESS_ACTIVITY * 100L + LAUNCH);
    o.put("severity_id", 1);
    o.put("severity", "Informational");
    o.put("time", millis(e.observedAt()));
    o.put("status_id", request ? 0 : 2);
    o.put("status", request ? "Unknown" : "Failure");
    o.put("action_id", request ? 0 : ACTION_DENIED);
    o.put("action", request ? "Unknown" : "Denied");
    o.put("disposition_id", request ? 0 : DISPOSITION_BLOCKED);
    o.put("disposition", request ? "Unknown" : "Blocked");
    if (e.reason() != null) {
      o.put("message", e.reason());
    }
    ObjectNode meta = metadata(o);
    if (e.eventId() != null) {
      meta.put("uid", e.eventId());
    }
    if (e.ingestedAt() != null) {
      meta.put("logged_time", millis(e.ingestedAt()));
    }
    o.putObject("actor").put("app_name", e.agentId() == null ? "" : e.agentId());
    ObjectNode process = o.putObject("process");
    put(process, "cmd_line", e.commandText());
    if (e.pid() != null) {
      process.put("pid", e.pid());
    }
    ObjectNode device = o.putObject("device");
    device.put("type_id", 0);
    if (e.origin() != null && e.origin().ingestHost() != null) {
      device.put("hostname", e.origin().ingestHost());
    }
    ObjectNode unmapped = o.putObject("unmapped");
    put(unmapped, "commandId", e.commandId());
    put(unmapped, "agentId", e.agentId());
    put(unmapped, "sessionId", e.sessionId());
    put(unmapped, "taskId", e.taskId());
    put(unmapped, "source", e.source());
    put(unmapped, "action", e.action());
    put(unmapped, "evidence", e.evidence());
    put(unmapped, "errno", e.errno());
    put(unmapped, "syscall", e.syscall());
    put(unmapped, "timeSource", e.timeSource());
    return o;
  }

  /** The alert as a Detection Finding: created when it fires, closed when it resolves. */
  public static ObjectNode finding(Alert a) {
    boolean resolved = a.status() == Alert.Status.RESOLVED;
    ObjectNode o = Json.MAPPER.createObjectNode();
    o.put("category_uid", 2);
    o.put("category_name", "Findings");
    o.put("class_uid", DETECTION_FINDING);
    o.put("class_name", "Detection Finding");
    int activity = resolved ? 3 : 1;
    o.put("activity_id", activity);
    o.put("activity_name", resolved ? "Close" : "Create");
    o.put("type_uid", DETECTION_FINDING * 100L + activity);
    int severity = switch (a.severity()) {
      case INFO -> 1;
      case WARNING -> 3;
      case PAGE -> 4;
      case CRITICAL -> 5;
    };
    o.put("severity_id", severity);
    o.put("severity", new String[] {"Unknown", "Informational", "Low", "Medium", "High", "Critical"}[severity]);
    Instant first = a.firstSeen() != null ? a.firstSeen() : a.lastSeen();
    Instant last = a.lastSeen() != null ? a.lastSeen() : a.firstSeen();
    o.put("time", millis(resolved ? last : first));
    o.put("status_id", resolved ? 4 : 1);
    o.put("status", resolved ? "Resolved" : "New");
    o.put("action_id", ACTION_DENIED);
    o.put("action", "Denied");
    o.put("disposition_id", DISPOSITION_BLOCKED);
    o.put("disposition", "Blocked");
    if (a.summary() != null) {
      o.put("message", a.summary());
    }
    metadata(o);
    ObjectNode info = o.putObject("finding_info");
    info.put("uid", a.fingerprint());
    info.put("title", a.rule());
    if (a.summary() != null) {
      info.put("desc", a.summary());
    }
    info.putArray("types").add(a.rule());
    info.putObject("analytic").put("name", a.rule()).put("type_id", 1).put("type", "Rule");
    if (a.firstSeen() != null) {
      info.put("first_seen_time", millis(a.firstSeen()));
    }
    if (a.lastSeen() != null) {
      info.put("last_seen_time", millis(a.lastSeen()));
    }
    if (a.meta() != null) {
      // the rule's tags as labels, its ATT&CK ones as attacks, its runbook as the remediation's reference
      a.meta().tags().forEach(t -> ((ObjectNode) o.get("metadata")).withArray("labels").add(t));
      a.meta().tags().stream().map(Alert.Meta::attackTechnique).filter(java.util.Objects::nonNull)
          .forEach(t -> info.withArray("attacks").addObject().putObject("technique").put("uid", t));
      if (a.meta().runbook() != null) {
        o.putObject("remediation").put("desc", "the rule's runbook").putArray("references").add(a.meta().runbook());
      }
    }
    ObjectNode unmapped = o.putObject("unmapped");
    put(unmapped, "commandId", a.commandId());
    put(unmapped, "agentId", a.agentId());
    put(unmapped, "role", a.role());
    unmapped.put("count", a.count());
    return o;
  }

  private static ObjectNode metadata(ObjectNode o) {
    ObjectNode meta = o.putObject("metadata");
    meta.put("version", VERSION);
    meta.putObject("product").put("name", "knockwatch").put("vendor_name", "knockwatch");
    meta.putArray("profiles").add("security_control");
    return meta;
  }

  /** File System Activity's activity for the refused syscall; 0 (Unknown) when it tells nothing. */
  static int fileActivity(String syscall) {
    if (syscall == null) {
      return 0;
    }
    return switch (syscall) {
      case "open", "openat", "openat2" -> 14;
      case "creat", "mkdir", "mkdirat", "mknod", "mknodat", "symlink", "symlinkat", "link", "linkat" -> 1;
      case "unlink", "unlinkat", "rmdir" -> 4;
      case "rename", "renameat", "renameat2" -> 5;
      case "chmod", "fchmod", "fchmodat", "chown", "fchown", "fchownat", "lchown", "utime", "utimes", "utimensat",
          "futimesat", "setxattr", "lsetxattr", "fsetxattr" -> 6;
      case "truncate", "ftruncate", "write", "pwrite64" -> 3;
      default -> 0;
    };
  }

  static final String[] FILE_ACTIVITIES = {"Unknown", "Create", "Read", "Update", "Delete", "Rename", "Set Attributes",
      "Set Security", "Get Attributes", "Get Security", "Encrypt", "Decrypt", "Mount", "Unmount", "Open"};

  static long millis(Instant t) {
    return t == null ? 0 : t.toEpochMilli();
  }

  static boolean isIp(String host) {
    return host.matches("[0-9.]+") || host.contains(":");
  }

  static void put(ObjectNode o, String key, String value) {
    if (value != null) {
      o.put(key, value);
    }
  }
}
