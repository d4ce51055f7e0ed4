package dev.knockwatch.notify.pagerduty;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.ConsoleLink;
import dev.knockwatch.events.IsoInstant;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.notify.spi.Defang;
import dev.knockwatch.notify.spi.Notification;

/**
 * The PagerDuty Events API v2 body of a notification, built without sending anything:
 * {@code trigger} with {@code dedup_key} = the alert's fingerprint (so one incident per alert,
 * however often it updates), PagerDuty's own severities, the alert's facts in
 * {@code custom_details} and the console timeline in {@code links}; {@code resolve} with the
 * same key. A digest triggers under the group's key. The summary's agent-written text is defanged
 * ({@link #summary}); the facts in {@code custom_details} stay as they were refused.
 */
public final class PagerDutyEvent {

  private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

  private PagerDutyEvent() {}

  public static ObjectNode body(Notification n, String routingKey, String publicUrl) {
    Alert a = n.first();
    ObjectNode body = JSON.objectNode();
    body.put("routing_key", routingKey);
    body.put("event_action", n.event() == Notification.Event.RESOLVED ? "resolve" : "trigger");
    body.put("dedup_key", n.key());
    if (n.event() == Notification.Event.RESOLVED) {
      return body;
    }
    ObjectNode payload = body.putObject("payload");
    payload.put("summary", summary(n));
    payload.put("source", "knockwatch/" + clean(a.agentId(), 200));
    payload.put("severity", severity(a.severity()));
    if (a.lastSeen() != null) {
      payload.put("timestamp", IsoInstant.format(a.lastSeen()));
    }
    payload.put("component", clean(a.agentId(), 200));
    payload.put("group", clean(a.role(), 200));
    payload.put("class", clean(a.rule(), 200));
    ObjectNode details = payload.putObject("custom_details");
    if (n.isDigest()) {
      details.put("alerts", n.alerts().size());
      n.alerts().stream().limit(20).forEach(x -> details.withArray("commands").add(clean(x.commandId(), 128)));
    } else {
      details.put("rule", clean(a.rule(), 200));
      details.put("commandId", clean(a.commandId(), 128));
      details.put("agent", clean(a.agentId(), 200));
      details.put("role", clean(a.role(), 200));
      // refusals per host:port (or path): a count alert's five most refused, else the alert's one host
      ObjectNode refused = JSON.objectNode();
      if (a.targets() != null) {
        a.targets().forEach(t -> refused.put(clean(t.target(), 300), t.count()));
      } else if (a.host() != null) {
        refused.put(clean(a.port() == null ? a.host() : a.host() + ":" + a.port(), 300), a.count());
      }
      if (!refused.isEmpty()) {
        details.set("refused", refused);
      }
      details.put("count", a.count());
      if (a.windowStart() != null && a.windowEnd() != null) {
        details.put("window", IsoInstant.format(a.windowStart()) + "/" + IsoInstant.format(a.windowEnd()));
      }
      if (a.firstSeen() != null) {
        details.put("firstSeen", IsoInstant.format(a.firstSeen()));
      }
      if (a.lastSeen() != null) {
        details.put("lastSeen", IsoInstant.format(a.lastSeen()));
      }
      details.put("fingerprint", a.fingerprint());
      if (a.policyVersion() != null) {
        details.put("policyVersion", a.policyVersion());
      }
      if (a.meta() != null) {
        details.set("rule_meta", dev.knockwatch.events.Json.MAPPER.valueToTree(a.meta()));
      }
    }
    if (publicUrl != null && a.commandId() != null) {
      body.withArray("links").addObject()
          .put("href", ConsoleLink.command(publicUrl, a.commandId()))
          .put("text", "knockwatch timeline of this command");
    }
    if (a.meta() != null && a.meta().runbook() != null) {
      body.withArray("links").addObject().put("href", a.meta().runbook()).put("text", "runbook of " + clean(a.rule(), 200));
    }
    body.put("client", "knockwatch");
    return body;
  }

  /** critical stays critical, page is error, warning and info keep their names. */
  static String severity(Alert.Severity s) {
    return switch (s) {
      case CRITICAL -> "critical";
      case PAGE -> "error";
      case WARNING -> "warning";
      case INFO -> "info";
    };
  }

  /**
   * PagerDuty cuts summaries at 1,024 characters; knockwatch cuts first, marking it. What the agent
   * wrote (the alert's summary, its hosts, and the command id) is defanged as in Slack
   * ({@code evil[.]example}): PagerDuty's pages, apps and the chats it posts to link what looks like
   * a host. Each part is cleaned and cut before it is defanged, so the pattern reads a bounded text.
   */
  static String summary(Notification n) {
    Alert a = n.first();
    String s = n.isDigest()
        ? "[" + a.severity().name() + "] " + a.rule() + ": " + n.alerts().size() + " alerts firing (grouped)"
        : "[" + a.severity().name() + "] " + a.rule() + ": " + Defang.text(clean(a.summary(), MAX_SUMMARY_CHARS))
            + " (command " + Defang.text(clean(a.commandId(), 128)) + ")";
    return Sanitize.text(s, MAX_SUMMARY_CHARS - 1); // the cut's mark is one more character
  }

  /** PagerDuty's bound of a summary. */
  static final int MAX_SUMMARY_CHARS = 1024;

  private static String clean(String s, int max) {
    return s == null ? "-" : Sanitize.text(s, max);
  }
}
