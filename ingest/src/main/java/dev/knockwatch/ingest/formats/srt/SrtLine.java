package dev.knockwatch.ingest.formats.srt;

import dev.knockwatch.events.AddressClass;
import dev.knockwatch.events.HostClassifier;
import dev.knockwatch.events.HostClassifier.HostPort;
import dev.knockwatch.events.Kind;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The {@code line} of an srt violation record, split into its parts. Shapes (srt 0.0.83):
 * <pre>
 * deny network-outbound HOST:PORT (REASON)
 * deny http-request METHOD URL-OR-HOST:PORT (REASON)
 * deny socks-tunnel HOST:PORT (REASON)
 * deny SYSCALL /abs/path
 * </pre>
 */
public record SrtLine(
    Kind kind,
    String action,
    String method,
    String target,
    String host,
    Integer port,
    String url,
    String path,
    String reason,
    AddressClass addressClass,
    Integer pid) {

  private static final Pattern FILESYSTEM = Pattern.compile("(?d)deny ([a-z_][a-z0-9_]*) (/.*)");
  private static final Pattern METHOD = Pattern.compile("(?d)[A-Za-z]+");
  private static final String RESOLVED = "resolved to ";

  /**
   * The parts of {@code line}, or empty when it is none of the known shapes. srt writes
   * {@code deny ${action} ${host}:${port} (${reason})} with the host as the client spelled it:
   * IPv6 without brackets ({@code ::1:443}: the port is after the last colon), and control bytes
   * turned into spaces ({@code pastebin.com .api.github.com:443}). The reason is srt's or the
   * operator's words, the target the agent's: the target ends at the last {@code " ("} that leaves
   * a valid target before it and {@code ")"} at the end of the line.
   */
  public static Optional<SrtLine> parse(String line) {
    String l = line.strip();
    if (!l.startsWith("deny ")) {
      return Optional.empty();
    }
    int actionEnd = l.indexOf(' ', 5);
    if (actionEnd < 0) {
      return Optional.empty();
    }
    String action = l.substring(5, actionEnd);
    String rest = l.substring(actionEnd + 1);
    switch (action) {
      case "network-outbound", "socks-tunnel" -> {
        return split(rest).flatMap(tr -> hostPort(tr[0]).map(hp -> new SrtLine(Kind.NETWORK, action, null, tr[0],
            hp.host(), hp.port(), null, null, tr[1], addressClassOf(tr[1]), null)));
      }
      case "http-request" -> {
        int methodEnd = rest.indexOf(' ');
        if (methodEnd <= 0 || !METHOD.matcher(rest.substring(0, methodEnd)).matches()) {
          return Optional.empty();
        }
        String method = rest.substring(0, methodEnd).toUpperCase(Locale.ROOT);
        return split(rest.substring(methodEnd + 1)).flatMap(tr -> {
          boolean isUrl = tr[0].contains("://");
          return (isUrl ? HostClassifier.fromUrl(tr[0]) : hostPort(tr[0])).map(hp -> new SrtLine(Kind.NETWORK,
              "http-request", method, tr[0], hp.host(), hp.port(), isUrl ? tr[0] : null, null, tr[1], addressClassOf(tr[1]),
              null));
        });
      }
      default -> {
        Matcher fs = FILESYSTEM.matcher(l);
        return fs.matches() ? Optional.of(new SrtLine(Kind.FILESYSTEM, fs.group(1), null, fs.group(2), null, null, null,
            fs.group(2), null, null, null)) : Optional.empty();
      }
    }
  }

  /** How far into a Seatbelt line its {@code ) deny(} may lie: past it, the text is the agent's path or host. */
  static final int MAX_PROCESS_CHARS = 256;
  private static final String SEATBELT_DENY = ") deny(";
  private static final Pattern SEATBELT_HOST = Pattern.compile("(?i)[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?");

  /**
   * The parts of a line srt on macOS keeps from Seatbelt's report in the unified log: what follows
   * {@code Sandbox:} (srt 0.0.83 {@code dist/sandbox/macos-sandbox-utils.js},
   * {@code startMacOSSandboxLogMonitor}: {@code /Sandbox:\s+(.+)$/}), which is the kernel's
   * {@code PROCESS(PID) deny(N) OPERATION TARGET}; empty when the line is not of that shape.
   * The process name is the agent's (any program it runs), the target its path or address: the
   * first {@code (PID) deny(N) } from the left is the kernel's, since the name comes first and is
   * short, and a forged one later in the line is part of the target. An operation on files
   * ({@code file-…}) names a path; a network one ({@code network-…}) an address and port, or the
   * path of a Unix socket; any other (e.g. {@code mach-lookup NAME}) is a refusal of kind process
   * whose target is kept as its reason. {@code N} is not read.
   */
  public static Optional<SrtLine> seatbelt(String line) {
    String l = line.strip();
    for (int at = l.indexOf(SEATBELT_DENY); at > 0 && at <= MAX_PROCESS_CHARS; at = l.indexOf(SEATBELT_DENY, at + 1)) {
      int digits = at;
      while (digits > 0 && Character.isDigit(l.charAt(digits - 1)) && l.charAt(digits - 1) < 128) {
        digits--;
      }
      if (digits == at || digits < 2 || l.charAt(digits - 1) != '(') {
        continue;
      }
      int n = at + SEATBELT_DENY.length();
      int nEnd = n;
      while (nEnd < l.length() && l.charAt(nEnd) >= '0' && l.charAt(nEnd) <= '9') {
        nEnd++;
      }
      if (nEnd == n || !l.startsWith(") ", nEnd)) {
        continue;
      }
      int op = nEnd + 2;
      int opEnd = op;
      while (opEnd < l.length() && isOperationChar(l.charAt(opEnd))) {
        opEnd++;
      }
      if (opEnd == op || l.charAt(op) < 'a' || l.charAt(op) > 'z' || (opEnd < l.length() && l.charAt(opEnd) != ' ')) {
        continue;
      }
      String operation = l.substring(op, opEnd);
      String target = opEnd < l.length() ? l.substring(opEnd + 1) : "";
      return Optional.of(seatbeltDenial(operation, target, pid(l.substring(digits, at))));
    }
    return Optional.empty();
  }

  private static boolean isOperationChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '*';
  }

  private static Integer pid(String digits) {
    return digits.length() > 9 ? null : Integer.valueOf(digits);
  }

  private static SrtLine seatbeltDenial(String operation, String target, Integer pid) {
    String t = target.isEmpty() ? null : target;
    if (operation.startsWith("file-")) {
      boolean path = t != null && t.startsWith("/");
      return new SrtLine(Kind.FILESYSTEM, operation, null, t, null, null, null, path ? t : null, path ? null : t, null,
          pid);
    }
    if (operation.startsWith("network")) {
      if (t != null && t.startsWith("/")) {
        return new SrtLine(Kind.UNIX_SOCKET, operation, null, t, null, null, null, t, null, null, pid);
      }
      // Seatbelt names the address dialled (its filters read `ip "HOST:PORT"`); anything else is no host
      Optional<HostPort> hp = t == null ? Optional.empty() : hostPort(t).filter(h -> SEATBELT_HOST.matcher(h.host())
          .matches() || HostClassifier.isIpLiteral(h.host()));
      return hp.map(h -> new SrtLine(Kind.NETWORK, operation, null, t, h.host(), h.port(), null, null, null, null, pid))
          .orElseGet(() -> new SrtLine(Kind.NETWORK, operation, null, t, null, null, null, null, t, null, pid));
    }
    return new SrtLine(Kind.PROCESS, operation, null, t, null, null, null, null, t, null, pid);
  }

  /** {@code TARGET (REASON)} as {target, reason}: the last split whose target reads as one. */
  private static Optional<String[]> split(String rest) {
    if (!rest.endsWith(")")) {
      return Optional.empty();
    }
    for (int at = rest.lastIndexOf(" ("); at > 0; at = rest.lastIndexOf(" (", at - 1)) {
      String target = rest.substring(0, at);
      if (target.contains("://") ? HostClassifier.fromUrl(target).isPresent() : hostPort(target).isPresent()) {
        return Optional.of(new String[] {target, rest.substring(at + 2, rest.length() - 1)});
      }
    }
    return Optional.empty();
  }

  /**
   * srt names the class ("resolved to a loopback address"), several joined by " / " when a name
   * resolved to more than one; the most dangerous one is kept. The phrases are srt 0.0.83's own
   * ({@code dist/sandbox/resolved-address-guard.js}: {@code DENIED_CLASSES} and
   * {@code REASON_ORDER}); docs/FORMATS.md lists them.
   */
  public static AddressClass addressClassOf(String reason) {
    int at = reason.indexOf(RESOLVED);
    if (at < 0) {
      return null;
    }
    AddressClass worst = null;
    for (String part : reason.substring(at + RESOLVED.length()).split(" / ")) {
      AddressClass c = PHRASES.getOrDefault(part.strip(), AddressClass.UNKNOWN);
      if (worst == null || rank(c) > rank(worst)) {
        worst = c;
      }
    }
    return worst;
  }

  /** srt 0.0.83's reason phrases, after "resolved to ". */
  static final java.util.Map<String, AddressClass> PHRASES = java.util.Map.ofEntries(
      java.util.Map.entry("a loopback address", AddressClass.LOOPBACK),
      java.util.Map.entry("an unspecified address", AddressClass.UNSPECIFIED),
      java.util.Map.entry("a link-local address", AddressClass.LINK_LOCAL),
      java.util.Map.entry("a multicast address", AddressClass.MULTICAST),
      java.util.Map.entry("the broadcast address", AddressClass.BROADCAST),
      java.util.Map.entry("a cloud metadata address", AddressClass.CLOUD_METADATA),
      java.util.Map.entry("a deny-listed address", AddressClass.DENY_LISTED),
      java.util.Map.entry("a listed address", AddressClass.LISTED),
      java.util.Map.entry("one of this host's addresses", AddressClass.THIS_HOST),
      java.util.Map.entry("a non-loopback address", AddressClass.NON_LOOPBACK),
      java.util.Map.entry("an unparsable address", AddressClass.UNKNOWN),
      // older wordings, and srt's debug log's "(a loopback address)" without the article's class words
      java.util.Map.entry("a private address", AddressClass.PRIVATE));

  private static int rank(AddressClass c) {
    return switch (c) {
      case CLOUD_METADATA -> 9;
      case LOOPBACK, THIS_HOST -> 8;
      case LINK_LOCAL -> 7;
      case UNSPECIFIED -> 6;
      case PRIVATE, NON_LOOPBACK, DENY_LISTED, LISTED -> 5;
      case MULTICAST, BROADCAST, CGNAT, RESERVED -> 4;
      case UNKNOWN -> 2;
      case PUBLIC -> 1;
    };
  }

  /**
   * {@code host:port}, {@code [v6]:port}, or srt's unbracketed {@code v6:port} (split at the last
   * colon): a port is required.
   */
  static Optional<HostPort> hostPort(String target) {
    Optional<HostPort> hp = HostClassifier.hostPort(target).filter(h -> h.port() != null);
    int colon = target.lastIndexOf(':');
    if (hp.isPresent() || target.startsWith("[") || colon <= 0 || target.indexOf(':') == colon) {
      return hp;
    }
    return HostClassifier.hostPort("[" + target.substring(0, colon) + "]" + target.substring(colon))
        .filter(h -> h.port() != null);
  }

}
