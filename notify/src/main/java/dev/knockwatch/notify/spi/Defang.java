package dev.knockwatch.notify.spi;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Agent-written text defanged the way SOCs share indicators, for a message a person reads: a
 * chat or an incident tool turns anything that looks like a host name or a URL into a link, so
 * {@code http://evil.example/x} becomes {@code hxxp[://]evil[.]example/x}. The text is neither
 * cleaned nor cut here: cut it first (the pattern is tried at every start of a long word, so its
 * time grows with the square of what it reads), and strip control and bidi characters before.
 */
public final class Defang {

  /** A word with a dot between two name characters, or a scheme: what a reader's tool would link. */
  private static final Pattern LINKABLE = Pattern.compile(
      "(?i)(?:[a-z][a-z0-9+.-]*://\\S*|[a-z0-9_-]+(?:\\.[a-z0-9_-]+)+\\S*)");

  private Defang() {}

  /** {@code http://evil.example/x} becomes {@code hxxp[://]evil[.]example/x}. */
  public static String text(String text) {
    Matcher m = LINKABLE.matcher(text);
    StringBuilder out = new StringBuilder(text.length() + 16);
    while (m.find()) {
      String word = m.group().replaceFirst("(?i)^http", "hxxp").replace("://", "[://]").replace(".", "[.]");
      m.appendReplacement(out, Matcher.quoteReplacement(word));
    }
    return m.appendTail(out).toString();
  }
}
