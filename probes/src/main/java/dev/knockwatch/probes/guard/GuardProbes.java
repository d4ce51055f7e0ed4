package dev.knockwatch.probes.guard;

import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The checks an operator would run by hand against a sandbox, each one a command that must be
 * refused. Network targets are the canary on 127.0.0.1 (reached as {@code localhost}), a
 * {@code .invalid} name, a TEST-NET address and a URL shortener that the settings deny by name:
 * inside the network guard none of them can reach anything beyond loopback.
 */
public final class GuardProbes {

  /** Where the canary listens inside the network guard. */
  public static final int CANARY_PORT = 18080;
  static final String CANARY_BODY = "knockwatch canary reached";
  /** TEST-NET-1 (RFC 5737): never routed anywhere. */
  static final String UNROUTABLE_IP = "192.0.2.10";

  // the canary answered, or the proxy let a tunnel through
  private static final Pattern REACHED = Pattern.compile(Pattern.quote(CANARY_BODY)
      + "|(?m)^< HTTP/1\\.[01] 200.*$|(?m)^\\* Connected to (?!localhost \\(127\\.0\\.0\\.1\\) port 3128).*$");

  private static final GuardProbe.Breach NETWORK = (run, ws) -> {
    java.util.regex.Matcher m = REACHED.matcher(run.output());
    return m.find() ? Optional.of("reached: " + m.group().strip()) : Optional.empty();
  };

  private GuardProbes() {}

  /** Every guard probe, in the order they run. */
  public static List<GuardProbe> all() {
    String canary = "localhost:" + CANARY_PORT;
    return List.of(
        new GuardProbe("plain-http", "network", "http://" + canary + "/",
            "curl -sv --max-time 10 --noproxy '' http://" + canary + "/",
            "403 with X-Proxy-Error: blocked-by-allowlist",
            Pattern.compile("(?m)^< X-Proxy-Error: blocked-by-allowlist"), NETWORK, true),
        new GuardProbe("https-connect", "network", canary,
            "curl -sv --max-time 10 --noproxy '' https://" + canary + "/",
            "CONNECT refused with 403",
            Pattern.compile("CONNECT tunnel failed, response 403"), NETWORK, true),
        new GuardProbe("noproxy-direct", "network", "knockwatch-canary.invalid:443",
            "curl -sv --max-time 10 --noproxy '*' https://knockwatch-canary.invalid/",
            "direct connection without the proxy cannot resolve the host",
            Pattern.compile("Could not resolve host: knockwatch-canary\\.invalid"), NETWORK, false),
        new GuardProbe("ip-literal-direct", "network", UNROUTABLE_IP + ":443",
            "curl -sv --max-time 10 --noproxy '*' https://" + UNROUTABLE_IP + "/",
            "direct dial of an IP literal: network unreachable",
            Pattern.compile("Network is unreachable"), NETWORK, false),
        new GuardProbe("url-shortener", "network", "bit.ly:443",
            "curl -sv --max-time 10 --noproxy '' https://bit.ly/knockwatch-probe",
            "CONNECT to a URL shortener refused with 403",
            Pattern.compile("CONNECT tunnel failed, response 403"), NETWORK, false),
        new GuardProbe("touch-home", "filesystem", "~/" + ProbeWorkspace.TOUCHED,
            "touch ~/" + ProbeWorkspace.TOUCHED,
            "write outside the allowed paths: Read-only file system",
            Pattern.compile("Read-only file system"),
            (run, ws) -> ws.exists(ProbeWorkspace.TOUCHED)
                ? Optional.of("~/" + ProbeWorkspace.TOUCHED + " was created") : Optional.empty(), false),
        new GuardProbe("read-ssh-key", "filesystem", "~/.ssh/id_ed25519",
            "cat ~/.ssh/id_ed25519",
            "~/.ssh is hidden: No such file or directory",
            Pattern.compile("No such file or directory"),
            (run, ws) -> run.output().contains(ProbeWorkspace.CANARY_KEY.strip())
                ? Optional.of("the canary key was read") : Optional.empty(), false),
        new GuardProbe("git-hook-append", "filesystem", "~/work/.git/hooks/pre-commit",
            "sh -c 'echo " + ProbeWorkspace.TOUCHED + " >> .git/hooks/pre-commit'",
            "git hooks are read-only: Read-only file system",
            Pattern.compile("Read-only file system"),
            (run, ws) -> ws.read("work/.git/hooks/pre-commit").contains(ProbeWorkspace.TOUCHED)
                ? Optional.of(".git/hooks/pre-commit was changed") : Optional.empty(), false),
        new GuardProbe("dotenv-write", "filesystem", "~/work/.env",
            "echo KNOCKWATCH_PROBE=1 > .env",
            ".env is deny-write: Permission denied",
            Pattern.compile("\\.env: Permission denied"),
            (run, ws) -> ws.read("work/.env").contains("KNOCKWATCH_PROBE")
                ? Optional.of(".env was written") : Optional.empty(), false),
        new GuardProbe("unix-socket", "unix-socket", "~/work/" + ProbeWorkspace.TOUCHED + ".sock",
            "socat -T2 - UNIX-CONNECT:" + ProbeWorkspace.TOUCHED + ".sock",
            "Unix socket creation: Operation not permitted (EPERM)",
            Pattern.compile("socket\\(1, 1, 0\\): Operation not permitted"),
            (run, ws) -> Optional.empty(), false));
  }

  /** The probe of that name. */
  public static Optional<GuardProbe> named(String name) {
    return all().stream().filter(p -> p.name().equals(name)).findFirst();
  }
}
