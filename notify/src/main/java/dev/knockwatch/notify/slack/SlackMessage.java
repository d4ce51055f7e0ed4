package dev.knockwatch.notify.slack;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.ConsoleLink;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.notify.spi.Defang;
import dev.knockwatch.notify.spi.Notification;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The Block Kit message of a notification, built without sending anything (tests compare it
 * with written-out payloads). One alert: severity, rule and what happened, the summary, then the
 * command, agent and role, the refused hosts with their counts (a count alert's five most
 * refused), count and window, first and last
 * seen, and a link to the console timeline when {@code publicUrl} is set. A digest: one line per
 * alert (at most {@value #MAX_DIGEST_LINES}) and the most refused hosts.
 *
 * <p>Every value from an event is untrusted: identifiers and hosts sit in code spans (Slack links
 * nothing there), free text is defanged, and all of it is escaped ({@link SlackText}).
 */
public final class SlackMessage {

  static final int MAX_DIGEST_LINES = 40;
  private static final int MAX_FIELD_CHARS = 300;
  private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss'Z'")
      .withZone(ZoneOffset.UTC);
  private static final DateTimeFormatter HHMM = DateTimeFormatter.ofPattern("HH:mm").withZone(ZoneOffset.UTC);
  private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

  private SlackMessage() {}

  /** {@code text} (the notification's one-line fallback) and {@code blocks}. */
  public static ObjectNode payload(Notification n, String publicUrl) {
    ObjectNode msg = JSON.objectNode();
    msg.put("text", fallback(n));
    msg.set("blocks", n.isDigest() ? digestBlocks(n) : alertBlocks(n, publicUrl));
    return msg;
  }

  /** One line: what a phone's notification shows. */
  static String fallback(Notification n) {
    Alert a = n.first();
    String what = n.isDigest() ? n.alerts().size() + " alerts " + event(n) : event(n);
    return SlackText.escape((n.possibleRepeat() ? REPEAT : "") + a.severity().name() + " " + clean(a.rule(), 100) + " "
        + what + (n.isDigest() ? "" : ": " + Defang.text(clean(a.summary(), 200))));
  }

  /** Before a notification the notifier may have sent already (it stopped between the send and its record). */
  static final String REPEAT = "(possibly a repeat) ";

  private static ArrayNode alertBlocks(Notification n, String publicUrl) {
    Alert a = n.first();
    ArrayNode blocks = JSON.arrayNode();
    blocks.add(section((n.possibleRepeat() ? REPEAT : "") + emoji(a) + " *" + a.severity().name() + "* · " + code(a.rule()) + " · *" + event(n) + "*\n"
        + SlackText.untrusted(a.summary(), SlackText.MAX_BLOCK_CHARS - 200)));
    ObjectNode fields = JSON.objectNode().put("type", "section");
    ArrayNode f = fields.putArray("fields");
    f.add(mrkdwn("*Command*\n" + code(a.commandId())));
    f.add(mrkdwn("*Agent / role*\n" + code(a.agentId()) + " / " + code(a.role())));
    if (a.targets() != null && !a.targets().isEmpty()) {
      StringBuilder top = new StringBuilder("*Refused (most first)*");
      a.targets().forEach(t -> top.append('\n').append(code(t.target())).append(" ×").append(t.count()));
      f.add(mrkdwn(top.toString()));
    } else if (a.host() != null) {
      f.add(mrkdwn("*Refused*\n" + code(a.port() == null ? a.host() : a.host() + ":" + a.port()) + " ×" + a.count()));
    }
    f.add(mrkdwn("*Count*\n" + a.count() + (a.windowStart() != null && a.windowEnd() != null
        ? " in " + HHMM.format(a.windowStart()) + "–" + HHMM.format(a.windowEnd()) + " UTC" : "")));
    f.add(mrkdwn("*First seen*\n" + time(a.firstSeen())));
    f.add(mrkdwn("*Last seen*\n" + time(a.lastSeen())));
    blocks.add(fields);
    blocks.add(context(a, publicUrl));
    return blocks;
  }

  private static ArrayNode digestBlocks(Notification n) {
    Alert a = n.first();
    ArrayNode blocks = JSON.arrayNode();
    blocks.add(section(emoji(a) + " *" + a.severity().name() + "* · " + code(a.rule()) + " · *" + n.alerts().size()
        + " alerts " + event(n) + "* (grouped)"));
    StringBuilder lines = new StringBuilder();
    int shown = 0;
    for (Alert x : n.alerts()) {
      if (shown == MAX_DIGEST_LINES) {
        break;
      }
      String line = "• " + code(x.commandId()) + " " + code(x.agentId()) + " / " + code(x.role()) + " — "
          + SlackText.untrusted(x.summary(), 200) + "\n";
      if (lines.length() + line.length() > SlackText.MAX_BLOCK_CHARS - 100) {
        blocks.add(section(lines.toString()));
        lines.setLength(0);
      }
      lines.append(line);
      shown++;
    }
    if (n.alerts().size() > shown) {
      lines.append("…and ").append(n.alerts().size() - shown).append(" more");
    }
    blocks.add(section(lines.toString()));
    Map<String, Long> hosts = new LinkedHashMap<>();
    for (Alert x : n.alerts()) {
      if (x.targets() != null) {
        x.targets().forEach(t -> hosts.merge(t.target(), t.count(), Long::sum));
      } else if (x.host() != null) {
        hosts.merge(x.port() == null ? x.host() : x.host() + ":" + x.port(), x.count(), Long::sum);
      }
    }
    if (!hosts.isEmpty()) {
      StringBuilder top = new StringBuilder("*Most refused*\n");
      hosts.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue(Comparator.reverseOrder())).limit(5)
          .forEach(e -> top.append(code(e.getKey())).append(" ×").append(e.getValue()).append('\n'));
      blocks.add(section(top.toString().strip()));
    }
    return blocks;
  }

  private static ObjectNode context(Alert a, String publicUrl) {
    ObjectNode ctx = JSON.objectNode().put("type", "context");
    ArrayNode elements = ctx.putArray("elements");
    if (publicUrl != null && a.commandId() != null) {
      String url = ConsoleLink.command(publicUrl, a.commandId());
      // our own URL (the operator's publicUrl, the id percent-encoded): the one link in the message
      elements.add(mrkdwn("<" + SlackText.escape(url).replace("|", "%7C") + "|Open the timeline>"));
    }
    if (a.meta() != null && a.meta().runbook() != null) {
      // the rule's runbook: operator-written, an http(s) URL by the loader, escaped all the same
      elements.add(mrkdwn("<" + SlackText.escape(a.meta().runbook()).replace("|", "%7C") + "|Runbook>"));
    }
    if (a.meta() != null && a.meta().tags() != null && !a.meta().tags().isEmpty()) {
      elements.add(mrkdwn("tags " + SlackText.escape(String.join(", ", a.meta().tags()))));
    }
    elements.add(mrkdwn("fingerprint " + code(a.fingerprint())
        + (a.policyVersion() == null ? "" : " · policy " + code(a.policyVersion()))));
    return ctx;
  }

  private static String emoji(Alert a) {
    if (a.status() == Alert.Status.RESOLVED) {
      return ":white_check_mark:";
    }
    return switch (a.severity()) {
      case CRITICAL -> ":rotating_light:";
      case PAGE -> ":red_circle:";
      case WARNING -> ":warning:";
      case INFO -> ":information_source:";
    };
  }

  private static String event(Notification n) {
    return n.event().name().toLowerCase(Locale.ROOT);
  }

  /** An identifier in a code span: no backticks inside, escaped, bounded. */
  static String code(String s) {
    if (s == null) {
      return "-";
    }
    return "`" + SlackText.escape(SlackText.truncate(clean(s, MAX_FIELD_CHARS).replace('`', '\''), MAX_FIELD_CHARS)) + "`";
  }

  private static String clean(String s, int max) {
    return s == null ? "-" : Sanitize.text(s, max);
  }

  private static String time(Instant t) {
    return t == null ? "-" : TIME.format(t);
  }

  private static ObjectNode section(String text) {
    ObjectNode s = JSON.objectNode().put("type", "section");
    s.set("text", mrkdwn(SlackText.truncate(text, SlackText.MAX_BLOCK_CHARS)));
    return s;
  }

  private static ObjectNode mrkdwn(String text) {
    return JSON.objectNode().put("type", "mrkdwn").put("text", text);
  }
}
