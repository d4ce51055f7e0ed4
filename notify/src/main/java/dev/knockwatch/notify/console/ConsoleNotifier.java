package dev.knockwatch.notify.console;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.notify.spi.Notification;
import dev.knockwatch.notify.spi.Notifier;
import java.io.PrintStream;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;

/** Prints each alert as one readable line. Agent-chosen text cannot break the line or the terminal. */
public final class ConsoleNotifier implements Notifier {

  private static final DateTimeFormatter HHMMSS = DateTimeFormatter.ofPattern("HH:mm:ss").withZone(ZoneOffset.UTC);
  private final String name;
  private final PrintStream out;

  public ConsoleNotifier(PrintStream out) {
    this("console", out);
  }

  public ConsoleNotifier(String name, PrintStream out) {
    this.name = name;
    this.out = out;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public Result notify(Notification n) {
    out.println(n.isDigest() ? digest(n) : format(n.first()));
    out.flush();
    return out.checkError() ? Result.failed(false, "console output failed") : Result.ok();
  }

  /** {@code ALERT [WARNING] persistent-retry firing command=… agent=… count=5 window=18:45:00-18:50:00Z — summary}. */
  public static String format(Alert a) {
    StringBuilder b = new StringBuilder(200);
    b.append("ALERT [").append(a.severity().name()).append("] ")
        .append(safe(a.rule())).append(' ')
        .append(a.status().name().toLowerCase(Locale.ROOT))
        .append(" command=").append(safe(a.commandId()));
    if (a.agentId() != null) {
      b.append(" agent=").append(safe(a.agentId()));
    }
    if (a.role() != null) {
      b.append(" role=").append(safe(a.role()));
    }
    if (a.host() != null) {
      b.append(" host=").append(safe(a.host()));
      if (a.port() != null) {
        b.append(':').append(a.port());
      }
    }
    b.append(" count=").append(a.count());
    if (a.windowStart() != null && a.windowEnd() != null) {
      b.append(" window=").append(time(a.windowStart())).append('-').append(time(a.windowEnd())).append('Z');
    }
    b.append(" fingerprint=").append(safe(a.fingerprint()));
    if (a.summary() != null) {
      b.append(" — ").append(safe(a.summary()));
    }
    return b.toString();
  }

  /** {@code ALERTS [WARNING] persistent-retry: 12 firing, commands=a,b,c,… (grouped)}. */
  static String digest(Notification n) {
    Alert a = n.first();
    StringBuilder b = new StringBuilder("ALERTS [").append(a.severity().name()).append("] ").append(safe(a.rule()))
        .append(": ").append(n.alerts().size()).append(' ').append(n.event().name().toLowerCase(Locale.ROOT))
        .append(", commands=");
    n.alerts().stream().limit(10).forEach(x -> b.append(safe(x.commandId())).append(','));
    b.setLength(b.length() - 1);
    if (n.alerts().size() > 10) {
      b.append(",…");
    }
    return b.append(" (grouped)").toString();
  }

  private static String time(Instant t) {
    return HHMMSS.format(t);
  }

  private static String safe(String s) {
    return s == null ? "-" : Sanitize.text(s, 300);
  }
}
