package dev.knockwatch.streams.count;

import java.time.Instant;
import java.util.List;

/** What the count detector remembers of one command in one window. */
public record WindowCount(
    long count,
    Instant firstSeen,
    Instant lastSeen,
    String agentId,
    String lastTarget,
    List<String> sampleEventIds) {}
