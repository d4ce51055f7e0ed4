package dev.knockwatch.events;

import java.util.concurrent.atomic.LongAdder;

/**
 * Makes agent-controlled text safe to store, log and show: control and bidi characters become
 * spaces, code points that are not characters (a lone surrogate, U+FFFE, U+FFFF) become U+FFFD,
 * and the text is cut to a bound with a marked cut, never splitting a surrogate pair.
 */
public final class Sanitize {

  /** What stands in for a code point that is not a character. */
  public static final char REPLACEMENT = '\uFFFD';

  private static final LongAdder REPLACED = new LongAdder();

  private Sanitize() {}

  /** Code points replaced with U+FFFD by this process so far (a lone surrogate, U+FFFE, U+FFFF). */
  public static long replaced() {
    return REPLACED.sum();
  }

  /** Strips control and bidi characters, replaces non-characters and cuts to {@code maxChars}, marking the cut with an ellipsis. */
  public static String text(String raw, int maxChars) {
    if (raw == null) {
      return null;
    }
    if (raw.length() <= maxChars && isSafe(raw)) {
      return raw; // the common case: nothing to change
    }
    int limit = Math.min(raw.length(), maxChars);
    StringBuilder out = new StringBuilder(limit + 1);
    int replaced = 0;
    int i = 0;
    for (; i < limit; i++) {
      char c = raw.charAt(i);
      if (Character.isHighSurrogate(c) && i + 1 < raw.length() && Character.isLowSurrogate(raw.charAt(i + 1))) {
        if (i + 1 >= limit) {
          break; // the pair does not fit: never half of it
        }
        out.append(c).append(raw.charAt(++i));
      } else if (Character.isSurrogate(c) || c == '\uFFFE' || c == '\uFFFF') {
        out.append(REPLACEMENT);
        replaced++;
      } else {
        out.append(isUnsafe(c) ? ' ' : c);
      }
    }
    if (replaced > 0) {
      REPLACED.add(replaced);
    }
    if (i < raw.length()) {
      out.append('…');
    }
    return out.toString();
  }

  public static boolean isSafe(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x20 || c >= 0x7f) {
        if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
          i++;
        } else if (isUnsafe(c) || Character.isSurrogate(c) || c == '\uFFFE' || c == '\uFFFF') {
          return false;
        }
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

  /** Bounds of the event's fields, in characters. */
  public static final int MAX_ID_CHARS = CommandId.MAX_LENGTH;
  public static final int MAX_WORD_CHARS = 64;
  public static final int MAX_HOST_CHARS = 255;
  public static final int MAX_URL_CHARS = 2048;
  public static final int MAX_PATH_CHARS = 4096;
  public static final int MAX_TEXT_CHARS = 1024;
  public static final int MAX_COMMAND_CHARS = 2048;

  /**
   * The event with every field an agent could have written made safe and bounded, whatever its
   * parser did: the last step before an event leaves ingest, so that no byte of it can make the
   * event unwritable or unreadable downstream. The event itself when nothing needs changing.
   * (The command id is checked for its alphabet before; here it is only bounded.)
   */
  public static ViolationEvent event(ViolationEvent e) {
    ViolationEvent.Origin o = e.origin();
    ViolationEvent.ProbeResult p = e.probe();
    ViolationEvent.IdentityClaim c = e.identityConflict();
    ViolationEvent.Unattributed u = e.unattributed();
    if (ok(e.commandId(), MAX_ID_CHARS) && ok(e.agentId(), MAX_ID_CHARS) && ok(e.role(), MAX_ID_CHARS)
        && ok(e.action(), MAX_WORD_CHARS) && ok(e.host(), MAX_HOST_CHARS) && ok(e.method(), MAX_WORD_CHARS)
        && ok(e.url(), MAX_URL_CHARS) && ok(e.path(), MAX_PATH_CHARS) && ok(e.reason(), MAX_TEXT_CHARS)
        && ok(e.newPath(), MAX_PATH_CHARS) && ok(e.rawPath(), MAX_PATH_CHARS) && ok(e.rawNewPath(), MAX_PATH_CHARS)
        && ok(e.proxyError(), MAX_WORD_CHARS) && ok(e.errno(), MAX_WORD_CHARS) && ok(e.syscall(), MAX_WORD_CHARS)
        && ok(e.commandText(), MAX_COMMAND_CHARS)
        && ok(e.sessionId(), MAX_ID_CHARS) && ok(e.taskId(), MAX_ID_CHARS) && ok(e.evidence(), MAX_WORD_CHARS)
        && (o == null || ok(o.file(), MAX_PATH_CHARS) && ok(o.ingestHost(), MAX_HOST_CHARS))
        && (p == null || ok(p.name(), MAX_WORD_CHARS) && ok(p.expected(), MAX_TEXT_CHARS)
            && ok(p.observed(), MAX_TEXT_CHARS))
        && (c == null || ok(c.agentId(), MAX_ID_CHARS) && ok(c.commandId(), MAX_ID_CHARS))
        && (u == null || ok(u.code(), MAX_WORD_CHARS) && ok(u.directory(), MAX_PATH_CHARS) && ok(u.identity(), MAX_TEXT_CHARS))
        && ok(e.protocol(), MAX_WORD_CHARS) && ok(e.sourceAddress(), MAX_HOST_CHARS)
        && (e.subject() == null || ok(e.subject().wall(), MAX_WORD_CHARS) && ok(e.subject().identity(), MAX_TEXT_CHARS))) {
      return e; // what every parser already makes: nothing to copy
    }
    return e.toBuilder()
        .commandId(text(e.commandId(), MAX_ID_CHARS))
        .agentId(text(e.agentId(), MAX_ID_CHARS))
        .role(text(e.role(), MAX_ID_CHARS))
        .action(text(e.action(), MAX_WORD_CHARS))
        .host(text(e.host(), MAX_HOST_CHARS))
        .method(text(e.method(), MAX_WORD_CHARS))
        .url(text(e.url(), MAX_URL_CHARS))
        .path(text(e.path(), MAX_PATH_CHARS))
        .newPath(text(e.newPath(), MAX_PATH_CHARS))
        .rawPath(text(e.rawPath(), MAX_PATH_CHARS))
        .rawNewPath(text(e.rawNewPath(), MAX_PATH_CHARS))
        .reason(text(e.reason(), MAX_TEXT_CHARS))
        .proxyError(text(e.proxyError(), MAX_WORD_CHARS))
        .errno(text(e.errno(), MAX_WORD_CHARS))
        .syscall(text(e.syscall(), MAX_WORD_CHARS))
        .commandText(text(e.commandText(), MAX_COMMAND_CHARS))
        .sessionId(text(e.sessionId(), MAX_ID_CHARS))
        .taskId(text(e.taskId(), MAX_ID_CHARS))
        .evidence(text(e.evidence(), MAX_WORD_CHARS))
        .origin(o == null ? null : new ViolationEvent.Origin(text(o.file(), MAX_PATH_CHARS), o.offset(),
            text(o.ingestHost(), MAX_HOST_CHARS)))
        .probe(p == null ? null : new ViolationEvent.ProbeResult(text(p.name(), MAX_WORD_CHARS),
            text(p.expected(), MAX_TEXT_CHARS), text(p.observed(), MAX_TEXT_CHARS), p.refused()))
        .identityConflict(c == null ? null : new ViolationEvent.IdentityClaim(text(c.agentId(), MAX_ID_CHARS),
            text(c.commandId(), MAX_ID_CHARS)))
        .unattributed(u == null ? null : new ViolationEvent.Unattributed(text(u.code(), MAX_WORD_CHARS),
            text(u.directory(), MAX_PATH_CHARS), text(u.identity(), MAX_TEXT_CHARS)))
        .protocol(text(e.protocol(), MAX_WORD_CHARS))
        .sourceAddress(text(e.sourceAddress(), MAX_HOST_CHARS))
        .subject(e.subject() == null ? null : new ViolationEvent.Subject(text(e.subject().wall(), MAX_WORD_CHARS),
            text(e.subject().identity(), MAX_TEXT_CHARS)))
        .build();
  }

  private static boolean ok(String s, int max) {
    return s == null || s.length() <= max && isSafe(s);
  }
}
