package dev.knockwatch.streams.count;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * What the count detector remembers of one command in one window. {@code targets}: refusals per
 * host:port (or path), at most {@value #MAX_TARGETS} of them; the rest count under {@value #OTHER}.
 */
public record WindowCount(
    long count,
    Instant firstSeen,
    Instant lastSeen,
    String agentId,
    String lastTarget,
    List<String> sampleEventIds,
    Map<String, Long> targets) {

  public static final int MAX_TARGETS = 20;
  public static final String OTHER = "(others)";
}
