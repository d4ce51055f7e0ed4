package dev.knockwatch.ingest;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;

/**
 * What a hostile agent writes where ingest reads it, from a seed: text with lone surrogates, NUL
 * and other control characters, bidi overrides, line and paragraph separators, non-characters,
 * quotes and backslashes; fields from empty to a megabyte; numbers out of range or not digits;
 * and lines of random bytes. The same seed gives the same lines.
 */
public final class Hostile {

  private static final String[] PIECES = {
      "\ud800", "\udfff", "\ud83d", "\ude00", "\uD83D\uDE00", "\u0000", "\u0001", "\u001b[2J", "\u007f", "\u0085",
      "\u202e", "\u202a", "\u2066", "\u2069", "\u200f", "\u061c", "\u2028", "\u2029", "\ufeff", "\ufffe", "\uffff",
      "\"", "\\", "\\u0000", "{", "}", "[", "]", ":", ",", " (", ")", "<!channel>", "<@U123>", "%00", "%0a", "\t",
      "é", "日本", "xn--", "..", "/../", "`", "$(", "${jndi:ldap://x}", "'", ";", "|", "&", "*", "?", "#"};
  private static final String[] TIMES = {
      "2026-11-29T18:45:32.887Z", "2026-11-29Tx1:45:32Z", "2026-11-29T-1:45:32Z", "9999-12-31T23:59:59Z",
      "2100-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "0001-01-01T00:00:00Z", "+999999999-12-31T23:59:59Z",
      "2026-02-30T00:00:00Z", "2026-11-29T24:00:00Z", "2026-11-29T18:45:32.8870000000000Z", "", "-1",
      "1795978481.495", "NaN", "2026-11-29 18:45:32", "2026-11-29T18:45:32+25:00"};
  private static final String[] HOSTS = {
      "example.com:443", "::1:443", "fe80::1:80", "[::1]:443", "::ffff:127.0.0.1:8080", "169.254.169.254:80",
      "pastebin.com .api.github.com:443", "evil.test:99999", "evil.test:-1", "evil.test:0x50", "evil.test:",
      ":443", "xn--80ak6aa92e.com:443", "EVIL.TEST.:443", "127.1:443", "2130706433:80", "0x7f.1:22"};

  private final Random random;

  public Hostile(long seed) {
    random = new Random(seed);
  }

  public Random random() {
    return random;
  }

  /** Text an agent chose: short most of the time, sometimes long, now and then a megabyte. */
  public String text() {
    int roll = random.nextInt(100);
    int pieces = roll < 80 ? random.nextInt(12) : roll < 98 ? 200 + random.nextInt(2000) : 0;
    StringBuilder b = new StringBuilder();
    if (roll >= 98) {
      b.append("x".repeat(1 << 20)); // a megabyte of padding
    }
    for (int i = 0; i < pieces; i++) {
      switch (random.nextInt(4)) {
        case 0 -> b.append(PIECES[random.nextInt(PIECES.length)]);
        case 1 -> b.append((char) random.nextInt(0x10000));
        default -> b.append((char) (' ' + random.nextInt(95)));
      }
    }
    return b.toString();
  }

  /** {@link #text} without spaces, tabs or newlines: one field of a space-separated log line. */
  public String token() {
    String t = text().replaceAll("[ \t\n\r\u000b\f]", "_");
    return t.isEmpty() ? "-" : t;
  }

  public String time() {
    return random.nextInt(4) == 0 ? text() : TIMES[random.nextInt(TIMES.length)];
  }

  public String hostPort() {
    return random.nextInt(4) == 0 ? text() + ":" + random.nextInt(70_000) : HOSTS[random.nextInt(HOSTS.length)];
  }

  <T> T pick(List<T> from) {
    return from.get(random.nextInt(from.size()));
  }

  /** {@code s} as a JSON string, every character outside printable ASCII escaped (so lone surrogates survive as escapes). */
  public static String json(String s) {
    StringBuilder b = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        b.append('\\').append(c);
      } else if (c < 0x20 || c >= 0x7f) {
        b.append(String.format("\\u%04x", (int) c));
      } else {
        b.append(c);
      }
    }
    return b.append('"').toString();
  }

  /** A line of random bytes, with no newline in it (it may hold NUL, invalid UTF-8, anything else). */
  byte[] bytes() {
    byte[] b = new byte[1 + random.nextInt(random.nextInt(10) == 0 ? 100_000 : 300)];
    random.nextBytes(b);
    for (int i = 0; i < b.length; i++) {
      if (b[i] == '\n') {
        b[i] = '?';
      }
    }
    return b;
  }

  /** {@code text} as the UTF-8 bytes of one line: a lone surrogate becomes '?', as any encoder writes it. */
  static byte[] line(String text) {
    return (text.replace('\n', ' ') + "\n").getBytes(StandardCharsets.UTF_8);
  }
}
