package dev.knockwatch.ingest.formats.strace;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.AddressClass;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.Rejection;
import dev.knockwatch.ingest.Settled;
import dev.knockwatch.ingest.spi.SourceLine;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Golden tests on the strace captures of srt 0.0.83 (samples/strace-6.1-srt-0.0.83-*). */
class StraceParserTest {

  static final Instant NOW = Instant.parse("2026-11-29T19:00:00Z");
  static final String CMD = "xhfHytmXL-L6RsYw2CrSjA";

  record Result(List<ViolationEvent> events, Map<String, Integer> skipped, List<Parsed.Rejected> rejected) {}

  static Result parseLines(List<String> lines, String commandId) {
    StraceParser parser = new StraceParser();
    List<ViolationEvent> events = new ArrayList<>();
    Map<String, Integer> skipped = new TreeMap<>();
    List<Parsed.Rejected> rejected = new ArrayList<>();
    long offset = 0;
    for (String line : lines) {
      Parsed p = Settled.of(parser.parse(new SourceLine("agent-1/" + commandId + ".strace", offset, line, "agent-1", commandId, "h", NOW)), NOW);
      offset += line.getBytes(StandardCharsets.UTF_8).length + 1;
      if (p instanceof Parsed.Events ev) {
        events.addAll(ev.events());
      } else if (p instanceof Parsed.Skipped s) {
        skipped.merge(s.reason(), 1, Integer::sum);
      } else {
        rejected.add((Parsed.Rejected) p);
      }
    }
    return new Result(events, skipped, rejected);
  }

  static Result fixture(String name) throws IOException {
    try (InputStream in = StraceParserTest.class.getResourceAsStream("samples/strace-6.1-srt-0.0.83-" + name.substring("strace-".length()))) {
      return parseLines(new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList(), CMD);
    }
  }

  static List<String> summary(Result r) {
    return r.events().stream().map(e -> e.syscall() + " " + e.errno() + " " + e.kind() + " "
        + (e.host() != null ? e.host() + ":" + e.port() + " " + e.addressClass() : e.path())).toList();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "strace-g1-netns-curl-ip.txt | connect ENETUNREACH NETWORK 93.184.215.14:443 PUBLIC",
      "strace-g1c-netns-bash-devtcp.txt | connect ENETUNREACH NETWORK 93.184.215.14:443 PUBLIC",
      "strace-g2-in-srt-curl-ip-direct.txt | connect ENETUNREACH NETWORK 93.184.215.14:443 PUBLIC",
      "strace-g3-in-srt-af-unix.txt | socket EPERM UNIX_SOCKET null"})
  void networkCapturesYieldTheirOneRefusal(String file, String expected) throws IOException {
    Result r = fixture(file);
    assertThat(summary(r)).containsExactly(expected);
    assertThat(r.rejected()).isEmpty();
    assertThat(r.events().get(0).commandId()).isEqualTo(CMD);
    assertThat(r.events().get(0).agentId()).isEqualTo("agent-1");
  }

  @Test
  void theFilesystemCaptureYieldsTheFourDenialsAndNotTheLocaleLookups() throws IOException {
    assertThat(summary(fixture("strace-g4-in-srt-fs-denials.txt"))).containsExactlyInAnyOrder(
        "openat EROFS FILESYSTEM /home/agent/sandbox-probe",
        "openat ENOENT FILESYSTEM /home/agent/.ssh/id_ed25519",
        "openat EROFS FILESYSTEM .git/hooks/pre-commit",
        "openat EACCES FILESYSTEM .env",
        "rename EBUSY FILESYSTEM /home/agent/work/.git/config.lock");
  }

  @Test
  void theReadmeRecipeCatchesOnlyGlibcsNscdProbeWhichIsNoise() throws IOException {
    Result r = fixture("strace-g5-readme-recipe-network-grep-EPERM.txt");
    assertThat(r.events()).isEmpty();
    assertThat(r.skipped()).containsEntry("nscd-probe", 2);
  }

  @Test
  void aProxiedRequestIsInvisibleToStrace() throws IOException {
    // the connect to the proxy succeeds (EINPROGRESS); the 403 is data, not a syscall error
    Result r = fixture("strace-g6-in-srt-curl-via-proxy.txt");
    assertThat(r.events()).isEmpty();
    assertThat(r.skipped()).containsEntry("nscd-probe", 2).containsKey("not-a-refusal");
  }

  @Test
  void theFullRecipeTracesHoldNoFalseRefusal() throws IOException {
    assertThat(summary(fixture("strace-g7-readme-recipe-fs-full.txt"))).allSatisfy(s ->
        assertThat(s).doesNotContain("/usr/lib/locale", "/usr/share/locale"));
    assertThat(summary(fixture("strace-g5-readme-recipe-network-full.txt")))
        .noneMatch(s -> s.contains("nscd") || s.startsWith("socket EPERM"));
  }

  @Test
  void pidPrefixesAndEveryTimeColumnAreRead() {
    Result r = parseLines(List.of(
        "[pid 4242] connect(5, {sa_family=AF_INET, sin_port=htons(80), sin_addr=inet_addr(\"169.254.169.254\")}, 16) = -1 EPERM (Operation not permitted)",
        "4243  18:45:32 connect(5, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, \"::1\", &sin6_addr), sin6_scope_id=0}, 28) = -1 ENETUNREACH (Network is unreachable)",
        "4244  18:45:32.123456 mkdir(\"/etc/x\", 0777) = -1 EROFS (Read-only file system)",
        "1795978481.495123 unlink(\"/home/agent/.bashrc\") = -1 EROFS (Read-only file system)"), CMD);
    assertThat(summary(r)).containsExactly(
        "connect EPERM NETWORK 169.254.169.254:80 CLOUD_METADATA",
        "connect ENETUNREACH NETWORK ::1:443 LOOPBACK",
        "mkdir EROFS FILESYSTEM /etc/x",
        "unlink EROFS FILESYSTEM /home/agent/.bashrc");
    assertThat(r.events()).extracting(ViolationEvent::pid).containsExactly(4242, 4243, 4244, null);
    assertThat(r.events()).extracting(ViolationEvent::observedAt).containsExactly(NOW,
        Instant.parse("2026-11-29T18:45:32Z"), Instant.parse("2026-11-29T18:45:32.123456Z"),
        Instant.parse("2026-11-29T18:54:41.495123Z"));
  }

  @Test
  void anUnfinishedCallIsJoinedWithItsResumedHalf() {
    Result r = parseLines(List.of(
        "[pid 7] connect(3, {sa_family=AF_INET, sin_port=htons(443),  <unfinished ...>",
        "[pid 8] getpid() = 8",
        "[pid 7] <... connect resumed>sin_addr=inet_addr(\"10.0.0.9\")}, 16) = -1 EACCES (Permission denied)",
        "[pid 9] <... connect resumed>) = -1 EPERM (Operation not permitted)"), CMD);
    assertThat(summary(r)).containsExactly("connect EACCES NETWORK 10.0.0.9:443 PRIVATE");
    assertThat(r.skipped()).containsEntry("resumed-without-start", 1).containsEntry("unfinished", 1);
  }

  @Test
  void aUnixSocketConnectNamesItsPath() {
    Result r = parseLines(List.of(
        "connect(3, {sa_family=AF_UNIX, sun_path=\"/run/docker.sock\"}, 110) = -1 EACCES (Permission denied)"), CMD);
    assertThat(r.events()).singleElement().satisfies(e -> {
      assertThat(e.kind()).isEqualTo(Kind.UNIX_SOCKET);
      assertThat(e.path()).isEqualTo("/run/docker.sock");
      assertThat(e.addressClass()).isNull();
    });
  }

  @Test
  void aRefusalInAFileWithoutACommandIdIsRejectedWithTheNamingRule() {
    Result r = parseLines(List.of("openat(AT_FDCWD, \".env\", O_WRONLY) = -1 EACCES (Permission denied)",
        "getpid() = 1"), "trace");
    assertThat(r.rejected()).singleElement().isEqualTo(new Parsed.Rejected(Rejection.SHORT_COMMAND_ID,
        "commandId is too short: 5 characters, at least 22 required (strace files are named <agentId>/<commandId>.strace)"));
  }

  @Test
  void exitAndSignalLinesAreNotCalls() {
    Result r = parseLines(List.of("5     +++ exited with 7 +++", "--- SIGCHLD {si_signo=SIGCHLD} ---", ""), CMD);
    assertThat(r.events()).isEmpty();
    assertThat(r.skipped()).containsEntry("not-a-call", 3);
  }

  @Test
  void metadataAddressIsClassified() {
    assertThat(parseLines(List.of("connect(3, {sa_family=AF_INET, sin_port=htons(80), sin_addr=inet_addr(\"169.254.169.254\")}, 16)"
        + " = -1 ENETUNREACH (Network is unreachable)"), CMD).events().get(0).addressClass())
        .isEqualTo(AddressClass.CLOUD_METADATA);
  }
  /**
   * Issue 43: every path a call names, normalised, with its spelling kept where it differs. The
   * lines are strace's own forms: plain, {@code -y} (the directory of a dirfd), a PID column,
   * {@code [pid N]}, a time column.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '#', nullValues = "-", value = {
      "5     rename(\"/w/.git/config.lock\", \"/w/.git/config\") = -1 EBUSY (Device or resource busy)"
          + " # /w/.git/config.lock # /w/.git/config # - # -",
      "renameat2(AT_FDCWD, \".zshrc.tmp\", AT_FDCWD, \".zshrc\", 0) = -1 EROFS (Read-only file system)"
          + " # .zshrc.tmp # .zshrc # - # -",
      "[pid 12] renameat2(AT_FDCWD</home/agent>, \".zshrc.tmp\", AT_FDCWD</home/agent>, \".zshrc\", RENAME_NOREPLACE)"
          + " = -1 EROFS (Read-only file system) # /home/agent/.zshrc.tmp # /home/agent/.zshrc # .zshrc.tmp # .zshrc",
      "renameat(3</w>, \"a.tmp\", 4</w/.git>, \"config\") = -1 EROFS (Read-only file system)"
          + " # /w/a.tmp # /w/.git/config # a.tmp # config",
      "symlink(\"/tmp/p.md\", \"/w/.claude/commands/deploy.md\") = -1 EROFS (Read-only file system)"
          + " # /tmp/p.md # /w/.claude/commands/deploy.md # - # -",
      "5     19:01:02.123456 symlinkat(\"/tmp/p.md\", AT_FDCWD</w>, \".claude/commands/deploy.md\") = -1 EROFS (Read-only file system)"
          + " # /tmp/p.md # /w/.claude/commands/deploy.md # - # .claude/commands/deploy.md",
      "link(\"/tmp/hook\", \".git/hooks/pre-commit\") = -1 EROFS (Read-only file system)"
          + " # /tmp/hook # .git/hooks/pre-commit # - # -",
      "linkat(AT_FDCWD</w>, \"x\", 3</w/.git/hooks>, \"pre-commit\", 0) = -1 EROFS (Read-only file system)"
          + " # /w/x # /w/.git/hooks/pre-commit # x # pre-commit",
      "openat(AT_FDCWD, \"/w/.git/./config\", O_WRONLY|O_TRUNC) = -1 EROFS (Read-only file system)"
          + " # /w/.git/config # - # /w/.git/./config # -",
      "openat(AT_FDCWD, \".git//hooks/x\", O_WRONLY|O_CREAT, 0755) = -1 EROFS (Read-only file system)"
          + " # .git/hooks/x # - # .git//hooks/x # -",
      "openat(AT_FDCWD</w/sub>, \"a/../.bashrc\", O_WRONLY|O_APPEND) = -1 EROFS (Read-only file system)"
          + " # /w/sub/.bashrc # - # a/../.bashrc # -",
      "openat(AT_FDCWD, \"../../.bashrc\", O_WRONLY|O_APPEND) = -1 EROFS (Read-only file system)"
          + " # ../../.bashrc # - # - # -",
      "1700000000.000001 mkdirat(AT_FDCWD, \".claude/agents\", 0777) = -1 EROFS (Read-only file system)"
          + " # .claude/agents # - # - # -",
      "mkdir(\"/w/.claude/./agents/\", 0777) = -1 EROFS (Read-only file system)"
          + " # /w/.claude/agents # - # /w/.claude/./agents/ # -",
      "openat(AT_FDCWD</w/a, b>, \"d\", O_RDONLY) = -1 EACCES (Permission denied)"
          + " # /w/a, b/d # - # d # -",
      // a directory whose name holds '<' is not told from its fd: the path stays relative
      "openat(AT_FDCWD</w/b<c>, \"d\", O_RDONLY) = -1 EACCES (Permission denied) # d # - # - # -"})
  void everyPathACallNamesNormalisedWithItsSpellingKept(String line, String path, String newPath, String rawPath,
      String rawNewPath) {
    Result r = parseLines(List.of(line), CMD);
    assertThat(r.events()).hasSize(1);
    ViolationEvent e = r.events().get(0);
    assertThat(e.kind()).isEqualTo(Kind.FILESYSTEM);
    assertThat(e.path()).isEqualTo(path);
    assertThat(e.newPath()).isEqualTo(newPath);
    assertThat(e.rawPath()).isEqualTo(rawPath);
    assertThat(e.rawNewPath()).isEqualTo(rawNewPath);
  }

  @Test
  void aSuccessfulCallWithItsFdsPathIsNoRefusalAndNoUnknownLine() {
    Result r = parseLines(List.of(
        "[pid 15314] openat(AT_FDCWD</tmp/st>, \"./b/../c\", O_WRONLY|O_CREAT|O_NOCTTY|O_NONBLOCK, 0666) = 3</tmp/st/c>"), CMD);
    assertThat(r.events()).isEmpty();
    assertThat(r.skipped()).containsExactly(Map.entry("not-a-refusal", 1));
  }

  /** Java's '.' and '$' stop at U+0085 and U+2028 unless told otherwise: a path an agent names with one is still read. */
  @Test
  void aPathWithALineSeparatorOtherThanNewlineIsStillARefusal() {
    Result r = parseLines(List.of("openat(AT_FDCWD, \"/w/.bashrc\u0085x\", O_WRONLY) = -1 EROFS (Read-only file system)",
        "openat(AT_FDCWD, \"/w/a\u2028b\", O_WRONLY) = -1 EROFS (Read-only file system)"), CMD);
    assertThat(r.events()).hasSize(2);
  }
}
