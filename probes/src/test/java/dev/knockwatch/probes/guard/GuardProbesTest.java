package dev.knockwatch.probes.guard;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.probes.sandbox.SrtBridge;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Golden: each probe judges srt 0.0.83's captured output of the same forbidden action (run by
 * hand, ../shared/fixtures) as refused, and names what it saw; a trace of the action is a breach.
 */
class GuardProbesTest {

  @TempDir Path dir;
  ProbeWorkspace ws;

  @BeforeEach
  void workspace() {
    ws = new ProbeWorkspace(dir);
    ws.reset();
  }

  static String fixture(String name) throws IOException {
    try (InputStream in = GuardProbesTest.class.getResourceAsStream("/fixtures/srt-0.0.83/" + name)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  /** exit codes of the captured runs, from _runs.tsv */
  static Map<String, Integer> exits() throws IOException {
    return fixture("_runs.tsv").lines().map(l -> l.split("\t"))
        .collect(Collectors.toMap(f -> f[0], f -> Integer.parseInt(f[1])));
  }

  static SrtBridge.Run run(Integer exit, String stdout, String stderr) {
    return new SrtBridge.Run("GuardProbesTestCommand", "knockwatch-guard", exit, stdout, stderr, 0);
  }

  @ParameterizedTest(name = "{0} on {1}")
  @CsvSource({
      "plain-http,        a-http-curl-v,                         < X-Proxy-Error: blocked-by-allowlist",
      "https-connect,     b-https-connect-curl-v,                'CONNECT tunnel failed, response 403'",
      "noproxy-direct,    c-https-noproxy-direct,                ",
      "ip-literal-direct, c2-ip-literal-noproxy-direct,          Network is unreachable",
      "url-shortener,     r6-denied-domain-with-reason-connect,  'CONNECT tunnel failed, response 403'",
      "touch-home,        d1-touch-home,                         Read-only file system",
      "read-ssh-key,      d2-cat-ssh-key,                        No such file or directory",
      "git-hook-append,   d3-git-hook-write,                     Read-only file system",
      "dotenv-write,      d4-dotenv-write,                       .env: Permission denied",
      "unix-socket,       d7-unix-socket-create,                 'socket(1, 1, 0): Operation not permitted'"})
  void theCapturedRefusalIsJudgedRefused(String probe, String capture, String observed) throws IOException {
    GuardProbe p = GuardProbes.named(probe).orElseThrow();
    String output = fixture(capture + ".txt");
    if (probe.equals("noproxy-direct")) {
      // the capture asked for example.com; the probe asks for a name that can never resolve
      output = output.replace("example.com", "knockwatch-canary.invalid");
      observed = "Could not resolve host: knockwatch-canary.invalid";
    }
    GuardProbe.Verdict v = p.judge(run(exits().get(capture), "", output), ws);
    assertThat(v.refused()).isTrue();
    assertThat(v.observed()).isEqualTo(observed);
  }

  @Test
  void theCanaryAnsweringIsABreachEvenWithoutAnError() {
    GuardProbe p = GuardProbes.named("plain-http").orElseThrow();
    GuardProbe.Verdict v = p.judge(run(0, "knockwatch canary reached\n",
        "< HTTP/1.1 200 OK\r\n< X-Knockwatch-Canary: reached\r\n"), ws);
    assertThat(v.refused()).isFalse();
    assertThat(v.observed()).isEqualTo("reached: knockwatch canary reached");
  }

  @Test
  void anOpenedTunnelIsABreachThoughTheProxyConnectionItselfIsNot() throws IOException {
    GuardProbe p = GuardProbes.named("https-connect").orElseThrow();
    // the capture connects to the proxy on localhost:3128: that alone is no breach
    assertThat(p.judge(run(56, "", fixture("b-https-connect-curl-v.txt")), ws).refused()).isTrue();
    GuardProbe.Verdict v = p.judge(run(35, "", "* Connected to localhost (127.0.0.1) port 3128 (#0)\n"
        + "< HTTP/1.1 200 Connection established\r\n* TLS handshake failed\n"), ws);
    assertThat(v.refused()).isFalse();
    assertThat(v.observed()).isEqualTo("reached: < HTTP/1.1 200 Connection established");
  }

  @Test
  void aDirectDialThatConnectsIsABreach() {
    GuardProbe.Verdict v = GuardProbes.named("ip-literal-direct").orElseThrow()
        .judge(run(0, "", "*   Trying 192.0.2.10:443...\n* Connected to 192.0.2.10 (192.0.2.10) port 443 (#0)\n"), ws);
    assertThat(v.refused()).isFalse();
    assertThat(v.observed()).isEqualTo("reached: * Connected to 192.0.2.10 (192.0.2.10) port 443 (#0)");
  }

  @Test
  void aFileThatWasWrittenIsABreachWhateverTheCommandPrinted() throws IOException {
    Files.writeString(ws.home().resolve(ProbeWorkspace.TOUCHED), "");
    GuardProbe.Verdict v = GuardProbes.named("touch-home").orElseThrow()
        .judge(run(1, "", "touch: cannot touch: Read-only file system\n"), ws);
    assertThat(v.refused()).isFalse();
    assertThat(v.observed()).isEqualTo("~/knockwatch-probe was created");

    Files.writeString(ws.work().resolve(".git/hooks/pre-commit"), "knockwatch-probe\n",
        java.nio.file.StandardOpenOption.APPEND);
    assertThat(GuardProbes.named("git-hook-append").orElseThrow().judge(run(0, "", ""), ws).observed())
        .isEqualTo(".git/hooks/pre-commit was changed");
  }

  @Test
  void theCanaryKeyOnStdoutIsABreach() {
    GuardProbe.Verdict v = GuardProbes.named("read-ssh-key").orElseThrow()
        .judge(run(0, ProbeWorkspace.CANARY_KEY, ""), ws);
    assertThat(v.refused()).isFalse();
    assertThat(v.observed()).isEqualTo("the canary key was read");
  }

  @Test
  void noEvidenceIsNoRefusalAndSaysWhatWasSeen() {
    GuardProbe.Verdict v = GuardProbes.named("unix-socket").orElseThrow()
        .judge(run(1, "", "2026/11/30 socat[2] E connect(5, AF=1 \"knockwatch-probe.sock\", 23): No such file or directory\n"), ws);
    assertThat(v.refused()).isFalse();
    assertThat(v.observed()).startsWith("no refusal seen: exit 1, 2026/11/30 socat[2] E connect(");
  }

  @Test
  void theWorkspaceIsPutBackBeforeEveryProbe() throws IOException {
    Files.writeString(ws.work().resolve(".env"), "KNOCKWATCH_PROBE=1");
    Files.writeString(ws.home().resolve(".ssh/id_ed25519"), "changed");
    ws.reset();
    assertThat(ws.work().resolve(".env")).doesNotExist();
    assertThat(ws.home().resolve(".ssh/id_ed25519")).hasContent(ProbeWorkspace.CANARY_KEY);
    assertThat(ws.work().resolve(".git/hooks/pre-commit")).hasContent(ProbeWorkspace.HOOK);
  }

  @Test
  void everyProbeHasAUniqueNameAndOnlyLoopbackOrUnresolvableTargets() {
    assertThat(GuardProbes.all()).extracting(GuardProbe::name).doesNotHaveDuplicates().hasSize(10);
    assertThat(GuardProbes.all()).filteredOn(p -> p.kind().equals("network")).extracting(GuardProbe::target)
        .allSatisfy(t -> assertThat(t).containsAnyOf("localhost:", ".invalid:", "192.0.2.", "bit.ly:"));
  }
}
