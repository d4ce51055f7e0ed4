package dev.knockwatch.notify;

import dev.knockwatch.events.Alert;

/**
 * One delivery channel (console, Slack, PagerDuty, webhook). A notifier only sends: routing,
 * silences, grouping and retries are stages in front of it.
 */
public interface Notifier {

  /** The receiver's name, as used in routes and metrics. */
  String name();

  Result notify(Alert alert);

  /** What a delivery came to; {@code retryable} tells the retry stage whether to try again. */
  record Result(boolean delivered, boolean retryable, String detail) {
    public static Result ok() {
      return new Result(true, false, "sent");
    }

    public static Result failed(boolean retryable, String detail) {
      return new Result(false, retryable, detail);
    }
  }
}
