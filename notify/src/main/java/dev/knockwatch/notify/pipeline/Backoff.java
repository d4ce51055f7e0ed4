package dev.knockwatch.notify.pipeline;

import java.time.Duration;
import java.util.Random;

/**
 * How long to wait before the next try: exponential with full jitter (a random wait up to
 * {@code base * 2^attempt}, capped), so receivers that failed together do not retry together;
 * never sooner than the receiver's own {@code Retry-After}.
 */
public record Backoff(Duration base, Duration cap, Duration giveUpAfter) {

  public static final Backoff DEFAULT = new Backoff(Duration.ofMillis(500), Duration.ofSeconds(60), Duration.ofMinutes(10));

  public Duration delay(int attempt, Duration retryAfter, Random random) {
    long ceiling = Math.min(cap.toMillis(), base.toMillis() << Math.min(attempt, 20));
    long jittered = ceiling <= 0 ? 0 : (long) (random.nextDouble() * ceiling);
    Duration d = Duration.ofMillis(jittered);
    return retryAfter != null && retryAfter.compareTo(d) > 0 ? retryAfter : d;
  }
}
