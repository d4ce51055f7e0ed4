package dev.knockwatch.events;

import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Removes secrets from command text, URLs and raw lines before they leave the ingest agent.
 *
 * <p>The agent chose the command; it can carry tokens in query strings, passwords in URLs,
 * Authorization headers, and srt's own per-run proxy password. What is redacted is replaced by
 * {@value #MASK} so the reader still sees that something was there.
 */
public final class Redactor {

  public static final String MASK = "[REDACTED]";

  /**
   * A rule runs only when the text holds one of its hints (lower case): most command text holds
   * no secret, and a substring test costs far less than a regex pass.
   */
  private record Rule(Pattern pattern, String replacement, boolean exactCase, int lookBehind, String... hints) {
    Rule(Pattern pattern, String replacement, String... hints) {
      this(pattern, replacement, false, 0, hints);
    }

    Rule(Pattern pattern, String replacement, int lookBehind, String... hints) {
      this(pattern, replacement, false, lookBehind, hints);
    }

    /**
     * Where a match can start at the earliest: 0 without hints, else the first hint's index
     * minus how far before its hint a match may start; -1 when no hint is in the text.
     */
    int earliestStart(String text, String lower) {
      if (hints.length == 0) {
        return 0;
      }
      String haystack = exactCase ? text : lower;
      int first = -1;
      for (String h : hints) {
        int at = haystack.indexOf(h);
        if (at >= 0 && (first < 0 || at < first)) {
          first = at;
        }
      }
      return first < 0 ? -1 : Math.max(0, first - lookBehind);
    }
  }

  private static final String SECRET_WORDS =
      "(?:access[_-]?token|refresh[_-]?token|id[_-]?token|token|api[_-]?key|apikey|key|secret"
          + "|client[_-]?secret|password|passwd|pwd|pass|auth|signature|sig|session|sessionid"
          + "|credential|credentials|x-amz-signature|x-amz-credential|x-amz-security-token)";

  /** Every word of {@link #SECRET_WORDS} starts with one of these. */
  private static final List<String> SECRET_STARTS = List.of("access", "refresh", "id", "token", "api", "key",
      "secret", "client", "pass", "pwd", "auth", "sig", "session", "credential", "x-amz");

  /** A word of {@link #SECRET_WORDS} right after one of {@code prefixes}: the text a rule needs. */
  private static String[] hints(String... prefixes) {
    return java.util.Arrays.stream(prefixes).flatMap(p -> SECRET_STARTS.stream().map(w -> p + w)).toArray(String[]::new);
  }

  private static final List<Rule> RULES = List.of(
      // Authorization: Basic xxx / Proxy-Authorization: Bearer xxx (headers, curl -H, transcripts)
      new Rule(Pattern.compile("(?i)((?:proxy-)?authorization\\s*[:=]\\s*(?:(?:basic|bearer|digest|token|negotiate)\\s+)?)[^\\s'\"]+"),
          "$1" + MASK, "proxy-".length(), "authorization"),
      // userinfo in URLs: scheme://user:password@host
      new Rule(Pattern.compile("(?i)([a-z][a-z0-9+.-]*://[^\\s/:@'\"]*:)[^\\s/@'\"]+@"), "$1" + MASK + "@", Integer.MAX_VALUE, "@"),
      // query or form parameters named like secrets: ?token=..., &password=...
      new Rule(Pattern.compile("(?i)([?&;]" + SECRET_WORDS + "=)[^&#\\s'\"]*"), "$1" + MASK, hints("?", "&", ";")),
      // --password xxx, --token=xxx, -p'xxx' style flags
      new Rule(Pattern.compile("(?i)(--?" + SECRET_WORDS + "(?:=|\\s+))(?:'[^']*'|\"[^\"]*\"|[^\\s'\"]+)"),
          "$1" + MASK, 1, hints("-")),
      // curl -u user:password / --user user:password
      new Rule(Pattern.compile("(?i)((?:^|\\s)(?:-u|--user|--proxy-user)\\s*['\"]?[^\\s:'\"]*:)[^\\s'\"]+"),
          "$1" + MASK, 1, "-u", "--user", "--proxy-user"),
      // ENV-style assignments: GITHUB_TOKEN=..., AWS_SECRET_ACCESS_KEY=...
      new Rule(Pattern.compile("(\\b[A-Z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|ACCESS_KEY)[A-Z0-9_]*=)(?:'[^']*'|\"[^\"]*\"|[^\\s'\"]+)"),
          "$1" + MASK, true, Integer.MAX_VALUE, "TOKEN", "SECRET", "PASSWORD", "PASSWD", "API_KEY", "ACCESS_KEY"),
      // well-known token shapes, wherever they stand
      new Rule(Pattern.compile("\\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
          + "|xox[abposr]-[A-Za-z0-9-]{10,}|sk-(?:ant-)?[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}"
          + "|eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]{8,})\\b"), MASK, 0,
          "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "sk-", "akia", "eyj"));

  private Redactor() {}

  public static String redact(String text) {
    if (text == null || text.isEmpty()) {
      return text;
    }
    String out = text;
    String lower = text.toLowerCase(java.util.Locale.ROOT);
    for (Rule rule : RULES) {
      int from = rule.earliestStart(out, lower);
      if (from < 0) {
        continue;
      }
      Matcher m = rule.pattern().matcher(out);
      if (m.find(from)) {
        StringBuilder sb = new StringBuilder(out.length() + 16);
        do {
          m.appendReplacement(sb, rule.replacement());
        } while (m.find());
        m.appendTail(sb);
        out = sb.toString();
        lower = out.toLowerCase(java.util.Locale.ROOT);
      }
    }
    return out;
  }
}
