package dev.knockwatch.ingest.formats.strace;

import dev.knockwatch.events.FsPaths;
import dev.knockwatch.events.HostClassifier;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.spi.Attribution;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.SourceLine;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * strace output ({@code strace -f [-t|-tt|-ttt]}, with {@code [pid N]} prefixes or PID
 * columns): failed network and filesystem calls whose errno is a refusal become events.
 * A call split over {@code <unfinished ...>} / {@code <... NAME resumed>} is joined first,
 * so one instance reads one file (it keeps the unfinished calls of each pid).
 *
 * <p>What is not a refusal is skipped and counted: calls that succeeded, errnos that are normal
 * life (ENOENT on a locale file, EINPROGRESS, EAGAIN), and glibc's nscd probe
 * ({@code socket(AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC|SOCK_NONBLOCK, 0) = -1 EPERM}), which every
 * libc program makes inside the sandbox.
 */
public final class StraceParser implements LineParser {
  static final int MAX_PENDING = 1024;

  private static final Pattern PREFIX = Pattern.compile(
      "(?d)^(?:\\[pid\\s+(\\d+)\\]\\s+|(\\d+)\\s+)?(?:(\\d{2}:\\d{2}:\\d{2}(?:\\.\\d+)?|\\d{9,}\\.\\d+)\\s+)?(.*)$");
  private static final Pattern CALL = Pattern.compile(
      "(?d)^([a-z_][a-z0-9_]*)\\((.*)\\)\\s+=\\s+(-?\\d+|\\?|0x[0-9a-f]+)(?:<[^>]*>)?(?:\\s+([A-Z][A-Z0-9]+)(?:\\s+\\((.*)\\))?)?\\s*$");
  private static final Pattern RESUMED = Pattern.compile("(?d)^<\\.\\.\\. ([a-z_][a-z0-9_]*) resumed>\\s?(.*)$");
  private static final String UNFINISHED = "<unfinished ...>";
  private static final Pattern CALL_NAME = Pattern.compile("(?d)^([a-z_][a-z0-9_]*)\\(");
  private static final Pattern SIN = Pattern.compile("(?d)sin_port=htons\\((\\d+)\\), sin_addr=inet_addr\\(\"([^\"]*)\"\\)");
  private static final Pattern SIN6 = Pattern.compile(
      "(?d)sin6_port=htons\\((\\d+)\\).*inet_pton\\(AF_INET6, \"([^\"]*)\"");
  // A quoted string, escapes included, "unrolled" with possessive runs: the alternation (?:[^"\\]|\\.)*
  // recursed once per character and overflowed the stack on a 64 KiB argument.
  private static final String STRING = "\"[^\"\\\\]*+(?:\\\\.[^\"\\\\]*+)*+\"";
  private static final Pattern SUN_PATH = Pattern.compile("(?d)sun_path=(@?" + STRING + ")");
  private static final Pattern QUOTED = Pattern.compile("(?d)(" + STRING + ")");

  private static final Set<String> NETWORK_CALLS = Set.of("connect", "sendto", "sendmsg", "sendmmsg", "bind", "socket");
  private static final Set<String> NETWORK_REFUSALS = Set.of("EPERM", "EACCES", "ENETUNREACH", "EHOSTUNREACH", "EAFNOSUPPORT");
  private static final Set<String> FS_CALLS = Set.of("open", "openat", "openat2", "creat", "mkdir", "mkdirat",
      "mknod", "mknodat", "unlink", "unlinkat", "rmdir", "rename", "renameat", "renameat2", "link", "linkat",
      "symlink", "symlinkat", "utime", "utimes", "utimensat", "futimesat", "chmod", "fchmodat", "chown",
      "fchownat", "lchown", "truncate", "setxattr", "lsetxattr", "removexattr", "lremovexattr");
  private static final Set<String> TWO_PATH_CALLS = Set.of("rename", "renameat", "renameat2", "link", "linkat",
      "symlink", "symlinkat");
  private static final Set<String> FS_REFUSALS = Set.of("EROFS", "EACCES", "EPERM", "EBUSY");
  /** An empty tmpfs hides these from the sandboxed command: there ENOENT is the refusal. */
  private static final List<String> HIDDEN_PATHS = List.of("/.ssh/", "/.aws/", "/.gnupg/", "/.kube/",
      "/.config/gcloud/", "/.docker/config.json", "/.netrc", "/.git-credentials", "/.azure/");
  private static final String NSCD_PROBE = "AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC|SOCK_NONBLOCK, 0";

  private final Map<String, String> pending = new LinkedHashMap<>();

  @Override
  public Parsed parse(SourceLine src) {
    Matcher pre = PREFIX.matcher(src.text());
    if (!pre.matches()) {
      return Parsed.skipped("not-a-call");
    }
    String pid = pre.group(1) != null ? pre.group(1) : pre.group(2) != null ? pre.group(2) : "";
    String time = pre.group(3);
    String body = pre.group(4).strip();

    Matcher resumed = RESUMED.matcher(body);
    if (resumed.matches()) {
      String head = pending.remove(pid + " " + resumed.group(1));
      if (head == null) {
        return Parsed.skipped("resumed-without-start");
      }
      // strace leaves two spaces before "<unfinished ...>": join on exactly one.
      body = head.stripTrailing() + " " + resumed.group(2);
    } else if (body.endsWith(UNFINISHED)) {
      Matcher name = CALL_NAME.matcher(body);
      if (name.find()) {
        if (pending.size() >= MAX_PENDING) {
          pending.remove(pending.keySet().iterator().next());
        }
        pending.put(pid + " " + name.group(1), body.substring(0, body.length() - UNFINISHED.length()));
      }
      return Parsed.skipped("unfinished");
    }

    Matcher call = CALL.matcher(body);
    if (!call.matches()) {
      return Parsed.skipped("not-a-call");
    }
    String syscall = call.group(1);
    String args = call.group(2);
    String errno = call.group(4);
    if (!"-1".equals(call.group(3)) || errno == null) {
      return Parsed.skipped("not-a-refusal");
    }
    ViolationEvent.Builder e = src.newEvent()
        .source(StraceFormat.NAME)
        .action(syscall)
        .syscall(syscall)
        .errno(errno)
        .reason(call.group(5) == null ? errno : Sanitize.text(call.group(5), 200))
        .pid(number(pid, Integer.MAX_VALUE));
    if (NETWORK_CALLS.contains(syscall)) {
      if (!NETWORK_REFUSALS.contains(errno)) {
        return Parsed.skipped("not-a-refusal");
      }
      if (syscall.equals("socket") && args.startsWith(NSCD_PROBE)) {
        return Parsed.skipped("nscd-probe");
      }
      network(e, syscall, args);
    } else if (FS_CALLS.contains(syscall)) {
      List<PathArg> paths = paths(syscall, args);
      boolean hidden = errno.equals("ENOENT") && paths.stream().anyMatch(p -> isHidden(p.normalised()));
      if (!FS_REFUSALS.contains(errno) && !hidden) {
        return Parsed.skipped("not-a-refusal");
      }
      e.kind(Kind.FILESYSTEM);
      if (!paths.isEmpty()) {
        PathArg first = paths.get(0);
        e.path(Sanitize.text(first.normalised(), 4096)).rawPath(first.raw());
      }
      if (paths.size() > 1) {
        PathArg second = paths.get(1);
        e.newPath(Sanitize.text(second.normalised(), 4096)).rawNewPath(second.raw());
      }
    } else {
      return Parsed.skipped("not-a-refusal");
    }

    Attribution.Result who = Attribution.of(src, null, null); // strace names no one: the layout does
    if (who instanceof Attribution.Refused r) {
      return Parsed.rejected(r.code(), r.reason() + " (strace files are named <agentId>/<commandId>.strace)");
    }
    return Parsed.of(((Attribution.Attributed) who).applyTo(e).observedAt(time(time, src.ingestedAt())).build());
  }

  private static void network(ViolationEvent.Builder e, String syscall, String args) {
    Matcher sin = SIN.matcher(args);
    Matcher sin6 = SIN6.matcher(args);
    Matcher sun = SUN_PATH.matcher(args);
    if (sin.find()) {
      address(e, sin.group(2), sin.group(1));
    } else if (sin6.find()) {
      address(e, sin6.group(2), sin6.group(1));
    } else if (sun.find()) {
      e.kind(Kind.UNIX_SOCKET).path(Sanitize.text(unquote(sun.group(1)), 4096));
      return;
    } else if (syscall.equals("socket") && args.startsWith("AF_UNIX")) {
      e.kind(Kind.UNIX_SOCKET);
      return;
    }
    e.kind(Kind.NETWORK);
  }

  private static void address(ViolationEvent.Builder e, String ip, String port) {
    String host = HostClassifier.canonical(ip);
    e.host(host).port(number(port, 65_535)).addressClass(HostClassifier.classify(host).orElse(null));
  }

  /** The digits as a number up to {@code max}, else null: the refusal is kept without it. */
  private static Integer number(String digits, int max) {
    if (digits.isEmpty() || digits.length() > 10) {
      return null;
    }
    long n = Long.parseLong(digits);
    return n <= max ? (int) n : null;
  }

  /**
   * A path argument: as the call spelled it, and normalised ({@link FsPaths}); {@code raw} is null
   * when the two are the same.
   */
  record PathArg(String normalised, String raw) {}

  /**
   * The paths a call names: its first quoted argument, and for the calls that name two (rename,
   * link, symlink and their {@code at} forms) the second too. A relative path is joined to the
   * directory its directory argument names where strace says it ({@code -y}:
   * {@code AT_FDCWD</w>}, {@code 3</w/repo>}); symlink's first path is the link's text, taken as
   * it reads.
   */
  /**
   * The directory strace -y printed for the argument that ends just before {@code at}
   * ({@code AT_FDCWD</w>, } or {@code 3</w/repo>, }), or null; read backwards, so that its cost
   * is the argument's length whatever the agent put in the line.
   */
  private static String dirBefore(String args, int from, int at) {
    int end = at;
    while (end > from && args.charAt(end - 1) == ' ') {
      end--;
    }
    if (end - 2 < from || args.charAt(end - 1) != ',' || args.charAt(end - 2) != '>') {
      return null;
    }
    int open = args.lastIndexOf('<', end - 3);
    if (open <= from) {
      return null;
    }
    int fd = open;
    while (fd > from && Character.isDigit(args.charAt(fd - 1))) {
      fd--;
    }
    boolean named = fd < open || args.startsWith("AT_FDCWD", open - 8) && open - 8 >= from;
    return named ? unescape(args.substring(open + 1, end - 2)) : null;
  }

  static List<PathArg> paths(String syscall, String args) {
    int wanted = TWO_PATH_CALLS.contains(syscall) ? 2 : 1;
    List<PathArg> out = new ArrayList<>(wanted);
    Matcher q = QUOTED.matcher(args);
    int from = 0;
    while (out.size() < wanted && q.find(from)) {
      String raw = unquote(q.group(1));
      String normalised = FsPaths.normalise(raw, dirBefore(args, from, q.start()));
      out.add(new PathArg(normalised, normalised.equals(raw) ? null : Sanitize.text(raw, 4096)));
      from = q.end();
    }
    return out;
  }

  private static String unquote(String s) {
    String t = s.startsWith("@") ? "@" + s.substring(2, s.length() - 1) : s.substring(1, s.length() - 1);
    return unescape(t);
  }

  /** strace escapes '"' and '\' and writes unprintable bytes as \ooo or \xhh; the text is kept escaped otherwise. */
  private static String unescape(String s) {
    return s.replace("\\\"", "\"").replace("\\\\", "\\");
  }

  private static boolean isHidden(String path) {
    return HIDDEN_PATHS.stream().anyMatch(path::contains);
  }

  /**
   * -ttt is an instant; -t and -tt are a time of day (UTC), on the day the line was read, or the
   * day before when that would put it later than an hour after the reading. None: null; a column
   * that does not read: {@link SourceLine#UNREADABLE_TIME}.
   */
  static Instant time(String column, Instant ingestedAt) {
    if (column == null) {
      return null;
    }
    try {
      if (column.indexOf(':') < 0) {
        BigDecimal seconds = new BigDecimal(column);
        return Instant.ofEpochSecond(seconds.setScale(0, java.math.RoundingMode.DOWN).longValueExact(),
            seconds.remainder(BigDecimal.ONE).movePointRight(9).intValue());
      }
      Instant t = LocalTime.parse(column).atDate(ingestedAt.atZone(ZoneOffset.UTC).toLocalDate()).toInstant(ZoneOffset.UTC);
      return t.isAfter(ingestedAt.plus(java.time.Duration.ofHours(1))) ? t.minus(java.time.Duration.ofDays(1)) : t;
    } catch (java.time.DateTimeException | NumberFormatException | ArithmeticException e) {
      return SourceLine.UNREADABLE_TIME;
    }
  }
}
