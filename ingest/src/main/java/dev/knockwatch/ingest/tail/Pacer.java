package dev.knockwatch.ingest.tail;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How many lines each paced file may give now: a token bucket per file, a second's worth of lines
 * at most, refilled at the pace. One command's file that floods faster is read at that pace: its
 * later lines wait in the file (its lag grows, no line is lost), and the pipeline behind stays
 * free for everyone else's refusals (no command starves another).
 */
final class Pacer {

  private static final Logger log = LoggerFactory.getLogger(Pacer.class);

  /** Paces nothing. */
  static final Pacer NONE = new Pacer(p -> false, 0, p -> "");

  private final Predicate<Path> paced;
  private final double perSecond;
  /** How a file is named in the log (its name is the writer's: sanitized). */
  private final Function<Path, String> shown;
  /** The paced files read lately, with what each may still read; a file whose bucket is full has none. */
  private final Map<Path, Bucket> buckets = new HashMap<>();

  private static final class Bucket {
    double tokens;
    long atNanos;
    /** Whether this flood of the file was logged: once a flood, until its bucket fills again. */
    boolean said;
  }

  /** Paces the files {@code paced} accepts to {@code linesPerSecond} lines a second; 0: none. */
  Pacer(Predicate<Path> paced, int linesPerSecond, Function<Path, String> shown) {
    this.paced = paced;
    this.perSecond = linesPerSecond;
    this.shown = shown;
  }

  /** How many lines {@code file} may give at {@code now} (nanoTime): no bound for a file that is not paced. */
  int allowance(Path file, long now) {
    if (perSecond <= 0 || !paced.test(file)) {
      return Integer.MAX_VALUE;
    }
    Bucket b = buckets.get(file);
    if (b == null) {
      return (int) perSecond;
    }
    b.tokens = Math.min(perSecond, b.tokens + (now - b.atNanos) / 1e9 * perSecond);
    b.atNanos = now;
    if (b.tokens >= perSecond) {
      buckets.remove(file); // full: as good as none, and the map holds only the files lately busy
      return (int) perSecond;
    }
    if (b.tokens < 1 && !b.said) {
      b.said = true;
      log.info("{}: more than {} lines a second: read at that pace, so that one command cannot crowd out the others "
          + "(its later lines wait in the file; none is lost)", shown.apply(file), (int) perSecond);
    }
    return (int) b.tokens;
  }

  /** Takes {@code lines} out of a paced file's bucket; {@code allowed} is what {@link #allowance} gave. */
  void spend(Path file, int allowed, int lines, long now) {
    if (lines == 0 || allowed == Integer.MAX_VALUE) {
      return;
    }
    Bucket b = buckets.computeIfAbsent(file, f -> {
      Bucket fresh = new Bucket();
      fresh.tokens = perSecond;
      fresh.atNanos = now;
      return fresh;
    });
    b.tokens -= lines;
  }
}
