package dev.knockwatch.ingest.formats.toolcall;

import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The refusal words of a command's output that curl's transcript reader does not know: the
 * shell's and coreutils' file errors, and other clients' words for a refused proxy tunnel or a
 * direct dial. Each yields what it names; the line is the agent's, so nothing here trusts it
 * beyond what it says (docs/TRUST.md: a command can print any of these).
 */
public final class OutputWords {

  private OutputWords() {}

  /** A file refusal: the path as printed (maybe relative), and its errno's name. */
  public record FileRefusal(String path, String errno, String words) {}

  /** A network refusal: the target as printed (host, host:port or URL; null when the line names none). */
  public record NetRefusal(String target, String action, String reason) {}

  private static final String WORDS = "(Read-only file system|Permission denied|Operation not permitted)";
  /** {@code touch: cannot touch '/p': Read-only file system}, {@code mkdir: cannot create directory ‘/p’: ...}. */
  private static final Pattern QUOTED = Pattern.compile("(?d)^.{0,200}?: cannot [a-z ]{1,40} ['‘`\"](.{1,4096}?)['’`\"]: " + WORDS + "$");
  /** {@code /bin/bash: line 1: /p: Read-only file system}, {@code cat: /p: Permission denied}. */
  private static final Pattern PLAIN = Pattern.compile("(?d)^(?:.{0,200}?: )?([~./][^:]{0,4096}|[^:/\\s]{1,255}/[^:]{0,4096}): " + WORDS + "$");
  /** Python: {@code PermissionError: [Errno 13] Permission denied: '/p'}, {@code OSError: [Errno 30] Read-only file system: '/p'}. */
  private static final Pattern PYTHON = Pattern.compile("(?d)\\[Errno \\d{1,3}\\] " + WORDS + ": '(.{1,4096}?)'$");
  /** curl's direct dial that failed: {@code curl: (7) Failed to connect to 169.254.169.254 port 80 after 0 ms: ...}. */
  private static final Pattern CURL_CONNECT = Pattern.compile("(?d)^curl: \\(7\\) Failed to connect to (\\S{1,300}) port (\\d{1,5})(?: after \\d+ ms)?: (.{0,200})$");
  /** wget: the URL it starts on ({@code --2026-12-03 23:00:00--  https://x/}), then its refusal. */
  private static final Pattern WGET_START = Pattern.compile("(?d)^--\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}--\\s+(\\S{1,2048})$");
  private static final Pattern WGET_REFUSED = Pattern.compile("(?d)^(?:Proxy tunneling failed: (.{0,100})|.*ERROR (40[37]): (.{0,100}))$");
  /** Python (urllib3/requests): {@code HTTPSConnectionPool(host='x', port=443): ... Tunnel connection failed: 403 Forbidden}. */
  private static final Pattern PYTHON_TUNNEL = Pattern.compile("(?d)host='([^']{1,253})', port=(\\d{1,5}).{0,2000}?Tunnel connection failed: (40[37][^'\")]{0,60})");
  /**
   * Codex's word for a call its network proxy refused, appended to the output (also inside its
   * {@code ProcessFailed} message, where the quotes are escaped): {@code Network access to
   * "evil.example" was blocked: domain is not on the allowlist for the current sandbox mode.}
   */
  private static final Pattern CODEX_BLOCKED = Pattern.compile(
      "(?d)Network access to \\\\?\"([^\"\\\\\\s]{1,300})\\\\?\" was blocked: ([^\"\\\\]{0,200})");
  /** Node's proxy agents: {@code tunneling socket could not be established, statusCode=403}. */
  private static final Pattern NODE_TUNNEL = Pattern.compile("(?d)tunneling socket could not be established, (?:statusCode|cause)=(40[37])");

  public static Optional<FileRefusal> file(String line) {
    Matcher m;
    if ((m = QUOTED.matcher(line)).matches() || (m = PLAIN.matcher(line)).matches()) {
      return Optional.of(new FileRefusal(m.group(1), errno(m.group(2)), m.group(2)));
    }
    if ((m = PYTHON.matcher(line)).find()) {
      return Optional.of(new FileRefusal(m.group(2), errno(m.group(1)), m.group(1)));
    }
    return Optional.empty();
  }

  /** What wget fetches, when {@code line} starts a wget attempt. */
  public static Optional<String> wgetStart(String line) {
    Matcher m = WGET_START.matcher(line);
    return m.matches() ? Optional.of(m.group(1)) : Optional.empty();
  }

  /** @param wgetUrl the URL wget last started on (null: none) */
  public static Optional<NetRefusal> network(String line, String wgetUrl) {
    Matcher m;
    if ((m = CURL_CONNECT.matcher(line)).matches()) {
      String host = m.group(1);
      String target = host.indexOf(':') >= 0 ? "[" + host + "]:" + m.group(2) : host + ":" + m.group(2);
      return Optional.of(new NetRefusal(target, "connect", "failed to connect: " + m.group(3).strip()));
    }
    if ((m = WGET_REFUSED.matcher(line)).matches()) {
      String why = m.group(1) != null ? "proxy tunneling failed: " + m.group(1) : "refused with status " + m.group(2);
      return Optional.of(new NetRefusal(wgetUrl, "http-connect", why));
    }
    if ((m = PYTHON_TUNNEL.matcher(line)).find()) {
      return Optional.of(new NetRefusal(m.group(1) + ":" + m.group(2), "http-connect",
          "tunnel connection failed: " + m.group(3).strip()));
    }
    if ((m = CODEX_BLOCKED.matcher(line)).find()) {
      return Optional.of(new NetRefusal(m.group(1), "network-outbound", "blocked by the network proxy: "
          + m.group(2).strip()));
    }
    if ((m = NODE_TUNNEL.matcher(line)).find()) {
      return Optional.of(new NetRefusal(null, "http-connect", "tunneling socket could not be established: " + m.group(1)));
    }
    return Optional.empty();
  }

  private static String errno(String words) {
    return switch (words) {
      case "Read-only file system" -> "EROFS";
      case "Permission denied" -> "EACCES";
      default -> "EPERM";
    };
  }
}
