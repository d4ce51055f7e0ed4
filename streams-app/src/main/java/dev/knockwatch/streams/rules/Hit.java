package dev.knockwatch.streams.rules;

import java.time.Instant;
import java.util.List;

/**
 * What a detector found in one refusal: the rule it satisfies and the refusal's facts. Hits go,
 * in memory, to {@code lifecycle/AlertLifecycleProcessor}, which decides what becomes an alert.
 *
 * @param fingerprint hash(rule, commandId[, host]): one alert per fingerprint
 * @param firstSeen the first refusal the hit stands for (the window's first for a count rule)
 * @param at the last refusal the hit stands for
 * @param eventIds some of the refusals' event ids
 * @param count the window's count for a count rule; 1 for the others
 * @param windowStart the window of a count rule, else null
 * @param targets a count rule's most refused targets in the window, most first; else null
 */
public record Hit(
    Rule rule,
    String fingerprint,
    String commandId,
    String agentId,
    String role,
    String host,
    Integer port,
    String source,
    Instant firstSeen,
    Instant at,
    List<String> eventIds,
    long count,
    Instant windowStart,
    Instant windowEnd,
    String summary,
    List<dev.knockwatch.events.Alert.Target> targets) {}
