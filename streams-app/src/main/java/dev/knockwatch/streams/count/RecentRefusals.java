package dev.knockwatch.streams.count;

import java.util.List;

/**
 * What the sliding count detector remembers of one command: its most recent refusals (at most
 * the rule's threshold, oldest first) while it has not crossed, or the episode it is in once it
 * has ({@code recent} is then empty).
 *
 * @param recent the newest refusals, by time, oldest first; at most the threshold
 * @param episode the crossing and every refusal after it until the rule's quiet time passes; null before
 */
public record RecentRefusals(List<Sighting> recent, WindowCount episode) {

  /** One refusal: its event time, event id and target (host:port or path). */
  public record Sighting(long at, String eventId, String target, String agentId) {}

  /** The time after which the state can no longer change what the detector says. */
  long expiresAt(long window, long grace, long quiet) {
    if (episode != null) {
      // a refusal up to quiet after the episode's last still belongs to it, and such a refusal
      // may arrive as late as window + grace behind stream time
      return episode.lastSeen().toEpochMilli() + quiet + window + grace;
    }
    // a sighting may still make a crossing with a refusal up to window after it, which may
    // arrive as late as window + grace behind stream time
    return recent.isEmpty() ? Long.MIN_VALUE : recent.get(recent.size() - 1).at() + 2 * window + grace;
  }
}
