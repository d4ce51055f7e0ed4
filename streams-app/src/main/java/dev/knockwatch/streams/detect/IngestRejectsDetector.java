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
        + " missing or bad command id): one alert per log directory and episode, under the key"
        + " `ingest-rejects.<hash of the directory>`").reading(Reads.INGEST_NOTICES);
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
    return new Finding("ingest rejected a refusal in "
        + (u.directory().isEmpty() ? "the logs' root" : "directory \"" + u.directory() + "\"")
        + " (" + u.code() + "): it cannot be told whose it is, and no other rule sees it"
        + (e.origin() == null ? "" : "; first " + e.origin().file() + ":" + e.origin().offset()), u.code());
  }
}
