package dev.knockwatch.streams.lifecycle;

import dev.knockwatch.events.Alert;

/**
 * A firing alert as the lifecycle keeps it (key: commandId + "|" + fingerprint, so one command's
 * alerts are found by prefix).
 *
 * @param alert the alert as it stands now (possibly newer than what was last written)
 * @param lastHitMs when the last hit happened, on the lifecycle's clock
 * @param lastEmittedMs when the alert was last written to knockwatch.alerts, on the same clock
 * @param pending whether {@code alert} changed since it was last written (a throttled update)
 * @param resolveAfterMs idle time after which it resolves
 * @param targets what the episode was refused, for a rule that judges each refusal; else null
 */
public record AlertState(Alert alert, long lastHitMs, long lastEmittedMs, boolean pending, long resolveAfterMs,
                         EpisodeTargets targets) {}
