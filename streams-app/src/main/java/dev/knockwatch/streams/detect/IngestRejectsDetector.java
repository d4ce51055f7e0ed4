package dev.knockwatch.streams.detect;

import dev.knockwatch.streams.rules.Detector;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.rules.Rule;
import dev.knockwatch.events.config.KeyValues;

/**
 * {@code ingest-rejects}: ingest's notice of a refusal it read but could not attribute (docs/TRUST.md), per
 * log directory.
 */
public final class IngestRejectsDetector implements Detector<IngestRejectsDetector.Settings> {

  public record Settings() implements Detector.Settings {}

  @Override
  public Spec spec() {
    return Spec.of("ingest-rejects", "a refusal ingest rejected for whose it is (a directory that is no agent id, a"
        + " missing or bad command id, a wall's identity its source maps to no agent): one alert per log directory, or"
        + " wall and identity, and episode, under the key `ingest-rejects.<hash of it>`").reading(Reads.INGEST_NOTICES);
  }

  @Override
  public Settings settings(KeyValues v) {
    return new Settings();
  }

  @Override
  public Finding judge(Rule rule, Settings s, Seen seen) {
    ViolationEvent e = seen.event();
    ViolationEvent.Unattributed u = e.unattributed();
    if (u == null) {
      return null;
    }
    String of = u.identity() != null ? "of " + u.identity() + ", which its source maps to no agent,"
        : u.directory() == null || u.directory().isEmpty() ? "in the logs' root" : "in directory \"" + u.directory() + "\"";
    return new Finding("ingest rejected a refusal " + of
        + " (" + u.code() + "): it cannot be told whose it is, and no other rule sees it"
        + (e.origin() == null ? "" : "; first " + e.origin().file() + ":" + e.origin().offset()), u.code());
  }
}
