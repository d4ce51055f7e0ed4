package dev.knockwatch.notify;

import dev.knockwatch.notify.alertmanager.AlertmanagerNotifier;
import dev.knockwatch.notify.config.Receiver;
import dev.knockwatch.notify.config.ReceiversConfig;
import dev.knockwatch.notify.console.ConsoleNotifier;
import dev.knockwatch.notify.pagerduty.PagerDutyNotifier;
import dev.knockwatch.notify.slack.SlackNotifier;
import dev.knockwatch.notify.spi.Notifier;
import dev.knockwatch.notify.webhook.WebhookNotifier;
import java.io.PrintStream;
import java.util.List;

/** Turns receivers.yaml's receivers into notifiers, one per receiver. */
public final class Notifiers {

  private Notifiers() {}

  public static List<Notifier> create(ReceiversConfig config, PrintStream console) {
    return config.receivers().stream().map(r -> create(r, config.publicUrl(), console)).toList();
  }

  static Notifier create(Receiver r, String publicUrl, PrintStream console) {
    if (r instanceof Receiver.Slack s) {
      return new SlackNotifier(s, publicUrl);
    }
    if (r instanceof Receiver.PagerDuty p) {
      return new PagerDutyNotifier(p, publicUrl);
    }
    if (r instanceof Receiver.Webhook w) {
      return new WebhookNotifier(w, publicUrl);
    }
    if (r instanceof Receiver.Alertmanager a) {
      return new AlertmanagerNotifier(a, publicUrl);
    }
    return new ConsoleNotifier(r.name(), console);
  }
}
