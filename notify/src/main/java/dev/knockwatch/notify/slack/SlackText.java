package dev.knockwatch.notify.slack;

import dev.knockwatch.events.Sanitize;
import dev.knockwatch.notify.spi.Defang;

/**
 * Agent-chosen text made safe for Slack's mrkdwn. Slack reads {@code <...>} as a control
 * sequence ({@code <!channel>}, {@code <@U123>}, {@code <http://evil|click>}), so {@code &},
 * {@code <} and {@code >} are escaped as Slack documents. Slack also turns anything that looks
 * like a link into one, so names and URLs are defanged the way SOCs share indicators
 * ({@code evil[.]example}, {@code hxxp[://]}: {@link Defang}). Control and bidirectional-override characters
 * become spaces, and text is cut to a bound with a visible marker.
 */
public final class SlackText {

  public static final String CUT = "… [truncated]";
  /** Slack's limit for the text of one section block. */
  public static final int MAX_BLOCK_CHARS = 3000;

  private SlackText() {}

  /** Untrusted text, ready to sit inside mrkdwn: cleaned, defanged, escaped, at most {@code max} characters. */
  public static String untrusted(String text, int max) {
    if (text == null) {
      return "-";
    }
    String clean = Sanitize.text(text, Integer.MAX_VALUE); // control and bidi characters become spaces
    // cut before defanging too: the pattern is tried at every start of a long word, so its time grows
    // with the square of what it reads, and only the first max characters are ever sent
    return escape(truncate(Defang.text(truncate(clean, max)), max));
  }

  /** Slack's three escapes: {@code &amp;}, {@code &lt;}, {@code &gt;}. */
  public static String escape(String text) {
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
  }

  /** At most {@code max} characters, the cut marked. */
  public static String truncate(String text, int max) {
    if (text.length() <= max) {
      return text;
    }
    int keep = Math.max(0, max - CUT.length());
    if (keep > 0 && Character.isHighSurrogate(text.charAt(keep - 1))) {
      keep--;
    }
    return text.substring(0, keep) + CUT;
  }
}
