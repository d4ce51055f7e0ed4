package dev.knockwatch.ingest.formats.netfilter;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The text the kernel's LOG target writes for a packet ({@code nf_log_syslog.c}, Linux 6.18): the
 * rule's prefix, glued to {@code IN=}, then {@code KEY=VALUE} and bare words, each followed by a
 * space: {@code IN= OUT=lo SRC=127.0.0.1 DST=127.0.0.1 LEN=60 ... PROTO=TCP SPT=35252 DPT=9 ... SYN
 * URGP=0 UID=65534 GID=65534 }. An ICMP error carries the packet it answers in brackets, with its
 * own SRC and DST: only what stands before the bracket is the packet's. IPv6 addresses are
 * written in full.
 *
 * @param prefix the listed prefix the text starts with
 * @param fields the first value of each key before any bracket
 */
record LogLine(String prefix, Map<String, String> fields) {

  private static final int MAX_FIELDS = 64;

  /**
   * The LOG line {@code text} is when it starts with one of {@code prefixes} followed by
   * {@code IN=} (spaces between the two allowed, since a listed prefix may lack the rule's
   * trailing space); null when it does not.
   */
  static LogLine of(String text, List<String> prefixes) {
    for (String p : prefixes) {
      if (!text.startsWith(p)) {
        continue;
      }
      int at = p.length();
      while (at < text.length() && text.charAt(at) == ' ') {
        at++;
      }
      if (text.startsWith("IN=", at)) {
        return new LogLine(p, fields(text.substring(at)));
      }
    }
    return null;
  }

  /** Whether {@code text} looks like any rule's LOG line: {@code IN=} then {@code OUT=} (another rule's, when no listed prefix starts it). */
  static boolean looksLikeOne(String text) {
    int in = text.indexOf("IN=");
    return in >= 0 && text.indexOf(" OUT=", in) > in;
  }

  private static Map<String, String> fields(String rest) {
    Map<String, String> out = new HashMap<>();
    int i = 0;
    int n = rest.length();
    while (i < n && out.size() < MAX_FIELDS) {
      if (rest.charAt(i) == '[') {
        break; // an ICMP error's inner packet
      }
      int end = rest.indexOf(' ', i);
      if (end < 0) {
        end = n;
      }
      int eq = rest.indexOf('=', i);
      if (eq > i && eq < end) {
        out.putIfAbsent(rest.substring(i, eq), rest.substring(eq + 1, end));
      }
      i = end + 1;
    }
    return out;
  }
}
