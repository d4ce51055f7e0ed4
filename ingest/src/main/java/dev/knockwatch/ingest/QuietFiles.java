package dev.knockwatch.ingest;

import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.tail.TailedLine;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.function.Function;

/**
 * The files whose parser holds a half-read refusal after their last line (a curl transcript cut
 * off after its headers): each is ended once its file has been quiet long enough, with what is
 * known of the refusal. Reader thread only.
 */
final class QuietFiles {

  /** A file's last line, its source, and when it was read. */
  record Quiet(TailedLine line, String sourceLabel, String source, long readAtNanos) {}

  /** What ending one file's held refusal does (publish what its parser ends with). */
  interface Ending {
    void end(LineParser parser, Quiet quiet);
  }

  /** By parser key. */
  private final Map<String, Quiet> held = new HashMap<>();

  /** The parser of {@code key} holds a refusal after {@code last}, read now. */
  void held(String key, TailedLine last, String sourceLabel, String source) {
    held.put(key, new Quiet(last, sourceLabel, source, System.nanoTime()));
  }

  /**
   * Ends each file quiet for {@code quietNanos} whose parser (by key, null once it is closed) still
   * holds a refusal; forgets those whose parser holds none. Returns how many were ended.
   */
  int end(Function<String, LineParser> parsers, long quietNanos, Ending ending) {
    if (held.isEmpty()) {
      return 0;
    }
    long now = System.nanoTime();
    int ended = 0;
    for (Iterator<Map.Entry<String, Quiet>> it = held.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<String, Quiet> e = it.next();
      Quiet q = e.getValue();
      LineParser parser = parsers.apply(e.getKey());
      if (parser == null || !parser.pending()) {
        it.remove();
        continue;
      }
      if (now - q.readAtNanos() < quietNanos) {
        continue;
      }
      it.remove();
      ending.end(parser, q);
      ended++;
    }
    return ended;
  }
}
