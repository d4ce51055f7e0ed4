package dev.knockwatch.streams.rules;

import dev.knockwatch.events.config.Key;

/**
 * README's reference of the detectors and their keys, made from what each detector declares
 * ({@link Detector#spec}): {@code ./knockwatch rules reference} prints it,
 * and a test fails when README's copy differs.
 */
public final class RulesReference {

  /** The lines around the reference in README.md. */
  public static final String BEGIN = "<!-- rules reference: made by ./knockwatch rules reference; do not edit -->";
  public static final String END = "<!-- end of rules reference -->";

  private RulesReference() {}

  /** The reference as Markdown: a list item per detector, a sub-item per key (name, type, default, what it does). */
  public static String markdown() {
    StringBuilder b = new StringBuilder();
    for (Detector<?> detector : Detectors.ALL) {
      Detector.Spec d = detector.spec();
      b.append("- `").append(d.name()).append("`: ").append(d.doc()).append(d.needsRoles() ? " (needs roles.yaml)" : "")
          .append('\n');
      for (Key<?> s : d.keys()) {
        b.append("  - `").append(s.name()).append("` (").append(s.type()).append("; default ").append(s.defaultText())
            .append("): ").append(s.doc()).append('\n');
      }
    }
    return b.toString();
  }
}
