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
   * A rule runs only when the text holds one of its hints (lower case unless {@code exactCase}):
   * most command text holds no secret, and finding a hint costs far less than a regex pass. A
   * match starts at most {@code lookBehind} characters before its hint. A rule's pattern starts
   * with group 1 when {@code keepGroup1}: the match becomes group 1 and {@code mask}; else it
   * becomes {@code mask} alone.
   */
  private record Rule(Pattern pattern, boolean keepGroup1, String mask, boolean exactCase, int lookBehind,
                      String... hints) {

    /** The text with every match from {@code from} on replaced, or null when nothing matched. */
    Redacted apply(String text, int from) {
      Matcher m = pattern.matcher(text);
      if (!m.find(from)) {
        return null;
      }
      int changedAt = keepGroup1 ? m.end(1) : m.start();
      StringBuilder sb = new StringBuilder(text.length() + mask.length());
      int last = 0;
      do {
        sb.append(text, last, keepGroup1 ? m.end(1) : m.start()).append(mask);
        last = m.end();
      } while (m.find());
      return new Redacted(sb.append(text, last, text.length()).toString(), changedAt);
    }
  }

  /** A rule's output: the new text, the same as the old one before {@code changedAt}. */
  private record Redacted(String text, int changedAt) {}

  private static final String SECRET_WORDS =
      "(?:access[_-]?token|refresh[_-]?token|id[_-]?token|token|api[_-]?key|apikey|key|secret"
          + "|client[_-]?secret|password|passwd|pwd|pass|auth|signature|sig|session|sessionid"
          + "|credential|credentials|x-amz-signature|x-amz-credential|x-amz-security-token)";

  /**
   * What {@code \s} matches, for use inside a character class: there {@code \s} makes the class
   * a chain of predicates, tested one after the other for every character; its characters
   * written out join the others in one table, a single lookup.
   */
  private static final String SPACE = " \\t\\n\\x0B\\f\\r";

  /** Every word of {@link #SECRET_WORDS} starts with one of these. */
  private static final List<String> SECRET_STARTS = List.of("access", "refresh", "id", "token", "api", "key",
      "secret", "client", "pass", "pwd", "auth", "sig", "session", "credential", "x-amz");

  /** A word of {@link #SECRET_WORDS} right after one of {@code prefixes}: the text a rule needs. */
  private static String[] hints(String... prefixes) {
    return java.util.Arrays.stream(prefixes).flatMap(p -> SECRET_STARTS.stream().map(w -> p + w)).toArray(String[]::new);
  }

  private static final List<Rule> RULES = List.of(
      // Authorization: Basic xxx / Proxy-Authorization: Bearer xxx (headers, curl -H, transcripts)
      new Rule(Pattern.compile("(?i)((?:proxy-)?authorization\\s*[:=]\\s*(?:(?:basic|bearer|digest|token|negotiate)\\s+)?)[^'\"" + SPACE + "]+"),
          true, MASK, false, "proxy-".length(), "authorization"),
      // userinfo in URLs: scheme://user:password@host. The scheme starts where a run of scheme
      // characters starts and is short: "[a-z][a-z0-9+.-]*://" tried at every letter of a long word
      // was quadratic (16,000 letters: 1.5 s).
      new Rule(Pattern.compile("(?i)((?<![a-z0-9+.-])[a-z][a-z0-9+.-]{0,31}://[^/:@'\"" + SPACE + "]*+:)[^/@'\"" + SPACE + "]++@"), true, MASK + "@", false, Integer.MAX_VALUE, "@"),
      // query or form parameters named like secrets: ?token=..., &password=...
      new Rule(Pattern.compile("(?i)([?&;]" + SECRET_WORDS + "=)[^&#'\"" + SPACE + "]*"), true, MASK, false, 0, hints("?", "&", ";")),
      // --password xxx, --token=xxx, -p'xxx' style flags
      new Rule(Pattern.compile("(?i)(--?" + SECRET_WORDS + "(?:=|\\s+))(?:'[^']*'|\"[^\"]*\"|[^'\"" + SPACE + "]+)"),
          true, MASK, false, 1, hints("-")),
      // curl -u user:password / --user user:password
      new Rule(Pattern.compile("(?i)((?:^|\\s)(?:-u|--user|--proxy-user)\\s*['\"]?[^:'\"" + SPACE + "]*:)[^'\"" + SPACE + "]+"),
          true, MASK, false, 1, "-u", "--user", "--proxy-user"),
      // ENV-style assignments: GITHUB_TOKEN=..., AWS_SECRET_ACCESS_KEY=... (names of at most 128
      // characters either side of the word: unbounded, a long run of capitals was quadratic)
      new Rule(Pattern.compile("(\\b[A-Z0-9_]{0,128}?(?:TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|ACCESS_KEY)[A-Z0-9_]{0,128}=)(?:'[^']*'|\"[^\"]*\"|[^'\"" + SPACE + "]+)"),
          true, MASK, true, Integer.MAX_VALUE, "TOKEN", "SECRET", "PASSWORD", "PASSWD", "API_KEY", "ACCESS_KEY"),
      // well-known token shapes, wherever they stand: gitleaks' rules (config/gitleaks.toml) of the
      // same ids, written anew; docs/FORMATS.md lists them with their sources
      // (each token starts where a run of token characters starts: at every "sk-" of "sk-sk-sk-..." it was quadratic)
      new Rule(Pattern.compile("(?<![A-Za-z0-9_-])(?:gh[pousr]_[A-Za-z0-9]{20,}+|github_pat_[A-Za-z0-9_]{20,}+"   // github-pat, github-fine-grained-pat
          + "|glpat-[A-Za-z0-9_-]{20,}+"                                                         // gitlab-pat
          + "|xox[abposre]-[A-Za-z0-9-]{10,}+"                                                   // slack-*-token
          + "|sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}+"                                             // anthropic-api-key, openai-api-key
          + "|(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}"                                    // aws-access-token
          + "|AIza[0-9A-Za-z_-]{35}"                                                             // gcp-api-key
          + "|npm_[A-Za-z0-9]{36}"                                                               // npm-access-token
          + "|hf_[A-Za-z]{34}"                                                                   // huggingface-access-token
          + "|(?:sk|rk)_(?:test|live|prod)_[A-Za-z0-9]{10,99}"                                    // stripe-access-token
          + "|SG\\.[A-Za-z0-9_-]{20,24}\\.[A-Za-z0-9_-]{39,50}"                                // sendgrid-api-token
          + "|pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}+"                                           // pypi-upload-token
          + "|eyJ[A-Za-z0-9_-]{8,}+\\.[A-Za-z0-9_-]{8,}+\\.[A-Za-z0-9_-]{8,}+)\\b"), false, MASK, false, 0, // jwt
          "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xox", "sk-", "akia", "asia", "a3t",
          "abia", "acca", "aiza", "npm_", "hf_", "sk_", "rk_", "sg.", "pypi-", "eyj"),
      // slack-webhook-url: the path after /services/ (or /workflows/, /triggers/) is the secret
      new Rule(Pattern.compile("(?i)(hooks\\.slack\\.com/(?:services|workflows|triggers)/)[A-Za-z0-9+/_-]++"), true, MASK,
          false, 0, "hooks.slack.com/"),
      // private-key: a PEM private key block, to its END line when it is there
      new Rule(Pattern.compile("-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----(?:[^-]{0,8192}+"
          + "-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----)?"), false, MASK, true, 0, "-----BEGIN"),
      // Cookie and Set-Cookie headers: every cookie of them is a session
      new Rule(Pattern.compile("(?i)((?:set-)?cookie\\s*:\\s*)[^'\"\\r\\n]+"), true, MASK, false, "set-".length(), "cookie"),
      // password=..., "secret": "...", api_key: ... in any text (a rejected line, a config echoed): the
      // name as a word of its own, quoted or not, then = or :
      new Rule(Pattern.compile("(?i)((?<![A-Za-z0-9_-])\"?(?:password|passwd|pwd|secret|client[_-]?secret|api[_-]?key"
          + "|apikey|access[_-]?key|secret[_-]?key|auth[_-]?token|access[_-]?token|refresh[_-]?token|private[_-]?key)"
          + "\"?\\s*[=:]\\s*)(?:\"[^\"]*+\"|'[^']*+'|[^\\s&'\",;}]++)"), true, MASK, false, 1, "password",
          "passwd", "pwd", "secret", "api_key", "api-key", "apikey", "access_key", "access-key", "accesskey",
          "secret_key", "secretkey", "auth_token", "authtoken", "access_token", "accesstoken", "refresh_token",
          "refreshtoken", "private_key", "privatekey", "client_secret", "clientsecret", "client-secret"));

  /** One hint of one rule (its index in {@link #RULES}). */
  private record Hint(int rule, String text) {}

  /**
   * The hints by their first two characters, ASCII folded to lower case ({@code c0 << 7 | c1}),
   * and the one-character hints by that character: one pass over the text finds every rule's
   * first hint.
   */
  private static final Hint[][] BY_PAIR = new Hint[1 << 14][];
  private static final Hint[][] BY_CHAR = new Hint[128][];
  /** Which pairs (and single characters) start a hint, a bit each: the scan looks the tables up only then. */
  private static final long[] PAIRS = new long[(1 << 14) / 64];
  private static final long[] CHARS = new long[2];
  /** The longest hint's length. */
  private static final int MAX_HINT_LENGTH =
      RULES.stream().flatMap(r -> java.util.Arrays.stream(r.hints())).mapToInt(String::length).max().orElseThrow();

  static {
    for (int r = 0; r < RULES.size(); r++) {
      for (String h : RULES.get(r).hints()) {
        Hint hint = new Hint(r, h);
        if (h.length() == 1) {
          BY_CHAR[fold(h.charAt(0))] = append(BY_CHAR[fold(h.charAt(0))], hint);
          CHARS[fold(h.charAt(0)) >>> 6] |= 1L << fold(h.charAt(0));
        } else {
          int key = fold(h.charAt(0)) << 7 | fold(h.charAt(1));
          BY_PAIR[key] = append(BY_PAIR[key], hint);
          PAIRS[key >>> 6] |= 1L << key;
        }
      }
    }
  }

  private static Hint[] append(Hint[] hints, Hint hint) {
    Hint[] more = hints == null ? new Hint[1] : java.util.Arrays.copyOf(hints, hints.length + 1);
    more[more.length - 1] = hint;
    return more;
  }

  private Redactor() {}

  /** The longest secret a rule masks whole, at a cut: text kept to N characters is redacted from its first N + this. */
  static final int MARGIN = 512;

  /**
   * The start of {@code text} that redaction needs before it is cut to {@code keep} characters:
   * a secret that straddles the cut is still seen whole, and nothing past it is worked on.
   */
  public static String head(String text, int keep) {
    return text == null || text.length() <= keep + MARGIN ? text : text.substring(0, keep + MARGIN);
  }

  /** What ingest keeps of agent-written text: redacted, then {@link Sanitize#text made safe} and cut to {@code maxChars}. */
  public static String safe(String text, int maxChars) {
    return Sanitize.text(redact(head(text, maxChars)), maxChars);
  }

  public static String redact(String text) {
    if (text == null || text.isEmpty()) {
      return text;
    }
    String out = text;
    int[] hintAt = new int[RULES.size()];
    java.util.Arrays.fill(hintAt, -1);
    findHints(out, 0, hintAt);
    for (int r = 0; r < RULES.size(); r++) {
      if (hintAt[r] >= 0) {
        Rule rule = RULES.get(r);
        Redacted next = rule.apply(out, Math.max(0, hintAt[r] - rule.lookBehind()));
        if (next != null) {
          out = next.text();
          // A hint that starts this far before the change ends before it: it is still there, and
          // still its rule's first. Every other hint is looked for again, from there on.
          int rescanFrom = Math.max(0, next.changedAt() - MAX_HINT_LENGTH + 1);
          for (int later = r + 1; later < RULES.size(); later++) {
            if (hintAt[later] >= rescanFrom) {
              hintAt[later] = -1;
            }
          }
          findHints(out, rescanFrom, hintAt);
        }
      }
    }
    return out;
  }

  /**
   * For each rule not yet placed ({@code -1}), where its first hint at or after {@code start}
   * stands in the text; rules already placed keep their place.
   */
  private static void findHints(String text, int start, int[] hintAt) {
    int n = text.length();
    char c1 = start < n ? fold(text.charAt(start)) : 0;
    for (int i = start; i < n; i++) {
      char c0 = c1;
      c1 = i + 1 < n ? fold(text.charAt(i + 1)) : 0x80; // past the end: no pair
      if (c0 >= 128) {
        continue;
      }
      if ((CHARS[c0 >>> 6] & 1L << c0) != 0) {
        found(BY_CHAR[c0], text, i, hintAt);
      }
      int key = c0 << 7 | c1;
      if (c1 < 128 && (PAIRS[key >>> 6] & 1L << key) != 0) {
        found(BY_PAIR[key], text, i, hintAt);
      }
    }
  }

  private static void found(Hint[] hints, String text, int i, int[] hintAt) {
    for (Hint h : hints) {
      if (hintAt[h.rule()] < 0 && at(text, i, h.text(), RULES.get(h.rule()).exactCase())) {
        hintAt[h.rule()] = i;
      }
    }
  }

  /**
   * Whether {@code hint} stands at {@code i}, ASCII letters folded to lower case unless
   * {@code exactCase}: as the rules' {@code (?i)} matches (ASCII only), and several times faster
   * than {@code regionMatches(true, ...)}, which was most of the redaction's time.
   */
  private static boolean at(String text, int i, String hint, boolean exactCase) {
    int n = hint.length();
    if (i + n > text.length()) {
      return false;
    }
    for (int k = 0; k < n; k++) {
      char c = text.charAt(i + k);
      if ((exactCase ? c : fold(c)) != hint.charAt(k)) {
        return false;
      }
    }
    return true;
  }

  private static char fold(char c) {
    return c >= 'A' && c <= 'Z' ? (char) (c + ('a' - 'A')) : c;
  }

  /** Every rule's regex over the whole text, hints ignored: what {@link #redact} must equal. */
  static String redactEverywhere(String text) {
    String out = text;
    for (Rule rule : RULES) {
      Redacted next = rule.apply(out, 0);
      if (next != null) {
        out = next.text();
      }
    }
    return out;
  }
}
