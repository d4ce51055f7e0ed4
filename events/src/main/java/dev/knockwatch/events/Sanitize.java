package dev.knockwatch.events;

/**
 * Makes attacker-chosen text safe to store and show: control and bidirectional-override
 * characters become spaces (so a hostname cannot rewrite a terminal line or reverse the text
 * an analyst reads), and the length is bounded.
 */
public final class Sanitize {

  private Sanitize() {}

  /** Strips control and bidi characters and cuts to {@code maxChars}, marking the cut with an ellipsis. */
  public static String text(String raw, int maxChars) {
    if (raw == null) {
      return null;
    }
    int limit = Math.min(raw.length(), maxChars);
    if (raw.length() <= maxChars && isSafe(raw)) {
      return raw; // the common case: nothing to change
    }
    StringBuilder out = new StringBuilder(limit + 1);
    for (int i = 0; i < limit; i++) {
      char c = raw.charAt(i);
      out.append(isUnsafe(c) ? ' ' : c);
    }
    if (raw.length() > maxChars) {
      // Never leave half a surrogate pair behind the cut.
      if (out.length() > 0 && Character.isHighSurrogate(out.charAt(out.length() - 1))) {
        out.setLength(out.length() - 1);
      }
      out.append('…');
    }
    return out.toString();
  }

  private static boolean isSafe(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if ((c < 0x20 || c >= 0x7f) && isUnsafe(c)) {
        return false;
      }
    }
    return true;
  }

  static boolean isUnsafe(char c) {
    return Character.isISOControl(c)
        || (c >= '\u202A' && c <= '\u202E')   // LRE, RLE, PDF, LRO, RLO
        || (c >= '\u2066' && c <= '\u2069')   // LRI, RLI, FSI, PDI
        || c == '\u200E' || c == '\u200F' || c == '\u061C'
        || c == '\u2028' || c == '\u2029' || c == '\uFEFF';
  }
}
