package dev.knockwatch.notify.spi;

import java.time.Duration;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;

/**
 * One delivery channel (console, Slack, PagerDuty, webhook). A notifier only sends: routing,
 * silences, grouping, throttling and retries are stages in front of it. A notifier never puts a
 * secret (webhook URL, token, routing key) in a result's detail.
 */
public interface Notifier {

  /** The receiver's name, as used in routes and metrics. */
  String name();

  Result notify(Notification notification);

  /**
   * What a delivery came to. {@code retryable} tells the retry stage whether to try again, no
   * sooner than {@code retryAfter} when the receiver said so; {@code ref} is what the receiver
   * returned to refer to the message later (a Slack ts).
   */
  record Result(boolean delivered, boolean retryable, Duration retryAfter, String detail, String ref) {
    public static Result ok() {
      return new Result(true, false, null, "sent", null);
    }

    public static Result ok(String ref) {
      return new Result(true, false, null, "sent", ref);
    }

    public static Result failed(boolean retryable, String detail) {
      return new Result(false, retryable, null, detail, null);
    }

    /**
     * The result of an HTTP answer: 2xx delivered; 429 and 5xx worth another try (after
     * {@code Retry-After}, in seconds or as an HTTP date, when given); any other status final.
     */
    public static Result ofStatus(int status, String retryAfter) {
      if (status >= 200 && status < 300) {
        return ok();
      }
      boolean retryable = status == 429 || status >= 500;
      return new Result(false, retryable, retryable ? retryAfter(retryAfter) : null, "HTTP " + status, null);
    }

    /**
     * Sends {@code req} and reads the answer as {@link #ofStatus}; an I/O error (refused, timed
     * out) is worth another try, and its text (which may quote an address) is not kept.
     */
    public static Result post(java.net.http.HttpClient http, java.net.http.HttpRequest req) {
      try {
        java.net.http.HttpResponse<Void> r = http.send(req, java.net.http.HttpResponse.BodyHandlers.discarding());
        return ofStatus(r.statusCode(), r.headers().firstValue("Retry-After").orElse(null));
      } catch (java.io.IOException e) {
        return failed(true, e.getClass().getSimpleName());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return failed(true, "interrupted");
      }
    }

    static Duration retryAfter(String header) {
      if (header == null || header.isBlank()) {
        return null;
      }
      String h = header.strip();
      try {
        return Duration.ofSeconds(Math.max(0, Long.parseLong(h)));
      } catch (NumberFormatException e) {
        try {
          Duration d = Duration.between(java.time.Instant.now(),
              ZonedDateTime.parse(h, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant());
          return d.isNegative() ? Duration.ZERO : d;
        } catch (DateTimeParseException ignored) {
          return null;
        }
      }
    }
  }
}
