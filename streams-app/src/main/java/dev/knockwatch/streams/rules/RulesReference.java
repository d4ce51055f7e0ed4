package dev.knockwatch.streams.rules;

import dev.knockwatch.events.config.Key;

/**
 * docs/CONFIGURATION.md's reference of the keys every rule takes and of the detectors and their keys, made from
 * their declarations ({@link RuleKeys}, {@link Detector#spec}): {@code ./knockwatch rules reference}
 * prints it, and a test fails when that copy differs.
 */
public final class RulesReference {

  /** The lines around the reference in docs/CONFIGURATION.md. */
  public static final String BEGIN = "<!-- rules reference: made by ./knockwatch rules reference; do not edit -->";
  public static final String END = "<!-- end of rules reference -->";

  private RulesReference() {}

  /**
   * The reference as Markdown: a list item for the keys every rule takes (and {@code match}'s),
   * then one per detector, a sub-item per key (name, type, default, what it does).
   */
  public static String markdown() {
    StringBuilder b = new StringBuilder("- every rule, whatever its detector:\n");
    for (Key<?> k : RuleKeys.ALL) {
      key(b, "  ", k);
      if (k == RuleKeys.MATCH) {
        RuleKeys.MATCH_KEYS.forEach(m -> key(b, "    ", m));
      }
    }
    for (Detector<?> detector : Detectors.ALL) {
      Detector.Spec d = detector.spec();
      b.append("- `").append(d.name()).append("`: ").append(d.doc()).append(d.needsRoles() ? " (needs roles.yaml)" : "")
          .append('\n');
      d.keys().forEach(k -> key(b, "  ", k));
    }
    return b.toString();
  }

  private static void key(StringBuilder b, String indent, Key<?> k) {
    b.append(indent).append("- `").append(k.name()).append("` (").append(k.type()).append("; default ")
        .append(k.defaultText()).append("): ").append(k.doc()).append('\n');
  }
}
