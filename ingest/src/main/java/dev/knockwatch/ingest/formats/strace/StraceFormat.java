package dev.knockwatch.ingest.formats.strace;

import dev.knockwatch.ingest.spi.FileOptions;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.SourceFormat;
import java.util.List;
import java.util.regex.Pattern;

/** An strace of a command: {@code <agentId>/<commandId>.strace}. */
public final class StraceFormat implements SourceFormat {

  public static final String NAME = "strace";
  private static final Pattern CALL_LINE =
      Pattern.compile("^(?:\\[pid\\s+\\d+\\]\\s+|\\d+\\s+)?(?:[\\d:.]+\\s+)?[a-z_][a-z0-9_]*\\(.*\\)\\s+=\\s");

  @Override
  public String wireName() {
    return NAME;
  }

  @Override
  public String summary() {
    return "`strace -f [-t|-tt|-ttt]` output, `[pid N]` prefixes or PID columns, `<unfinished ...>` / `<... resumed>`"
        + " joined: failed `connect`/`socket`/`sendto`/`sendmsg`/`bind` (EPERM, EACCES, ENETUNREACH, EHOSTUNREACH,"
        + " EAFNOSUPPORT) and filesystem calls (`open*`, `creat`, `mkdir*`, `unlink*`, `rename*`, `utime*`, `chmod`, ...:"
        + " EROFS, EACCES, EPERM, EBUSY, and ENOENT on hidden credential paths such as `~/.ssh`), with the address from"
        + " `sin_addr`/`sin6_addr`/`sun_path`. Every path a call names is kept: `rename*`, `link*` and `symlink*` give"
        + " `path` and `newPath`; paths are normalised (`.`, `..`, `//`, and a relative path joined to the directory"
        + " `strace -y` prints) with the spelling kept in `rawPath` / `rawNewPath` where it differs. glibc's nscd probe"
        + " (`socket(AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC|SOCK_NONBLOCK, 0) = -1 EPERM`) is noise: counted, never published";
  }

  @Override
  public Choice choice() {
    return Choice.suffixes(".strace").orFirstLine("a system call with its result (`NAME(...) = `)",
        l -> CALL_LINE.matcher(l).find());
  }

  @Override
  public boolean perCommand() {
    return true;
  }

  @Override
  public LineParser parser(FileOptions options) {
    return new StraceParser();
  }

  @Override
  public List<Skip> skips() {
    return List.of(
        new Skip("not-a-refusal", "a call that succeeded, or failed with an errno that is normal life (ENOENT of a"
            + " locale file, EINPROGRESS, EAGAIN)"),
        new Skip("not-a-call", "a line that is no system call: strace's own notes (`+++ exited with 0 +++`, `--- SIGCHLD …`)"),
        new Skip("unfinished", "the first half of a call split by another process's line (`<unfinished ...>`): the call"
            + " is judged when it resumes"),
        new Skip("resumed-without-start", "the second half of a call whose first half was never read (the trace"
            + " started in the middle)"),
        new Skip("nscd-probe", "glibc's `socket(AF_UNIX, …) = -1 EPERM` that every libc program makes in the sandbox:"
            + " noise"));
  }

  @Override
  public String yields() {
    return "each failed call with a refusing errno (network: EPERM, EACCES, ENETUNREACH, EHOSTUNREACH, EAFNOSUPPORT;"
        + " filesystem: EROFS, EACCES, EPERM, EBUSY, and ENOENT on hidden credential paths), with every path it names";
  }

  @Override
  public Trust trust() {
    return new Trust("strace, run by the harness around the sandboxed command, into the file the harness names",
        "who: the agent (the directory) and the command (the file name)",
        "every argument strace prints (paths, addresses, strings the command passed), the PIDs inside the sandbox's"
        + " namespace; whole lines, where the command can write to the trace's file or its stderr is the trace");
  }
}
