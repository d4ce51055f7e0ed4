package dev.knockwatch.ingest.srt;

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
    AddressClass addressClass) {

  private static final Pattern NETWORK = Pattern.compile(
      "deny (network-outbound|socks-tunnel) (\\S+) \\((.*)\\)");
  private static final Pattern HTTP = Pattern.compile(
      "deny http-request ([A-Za-z]+) (\\S+) \\((.*)\\)");
  private static final Pattern FILESYSTEM = Pattern.compile("deny ([a-z_][a-z0-9_]*) (/.*)");
  private static final String RESOLVED = "resolved to ";
  private static final String OUTBOUND = "deny network-outbound ";

  /** The parts of {@code line}, or empty when it is none of the known shapes. */
  public static Optional<SrtLine> parse(String line) {
    String l = line.strip();
    if (!l.startsWith("deny ")) {
      return Optional.empty();
    }
    if (l.startsWith(OUTBOUND) && l.endsWith(")")) {
      // the common shape without a regex: deny network-outbound HOST:PORT (REASON)
      int space = l.indexOf(' ', OUTBOUND.length());
      if (space > 0 && l.startsWith(" (", space) && l.indexOf(' ', OUTBOUND.length()) == space) {
        String target = l.substring(OUTBOUND.length(), space);
        String reason = l.substring(space + 2, l.length() - 1);
        return hostPort(target).map(hp -> new SrtLine(Kind.NETWORK, "network-outbound", null, target,
            hp.host(), hp.port(), null, null, reason, addressClassOf(reason)));
      }
    }
    Matcher net = NETWORK.matcher(l);
    if (net.matches()) {
      String reason = net.group(3);
      return hostPort(net.group(2)).map(hp -> new SrtLine(Kind.NETWORK, net.group(1), null,
          net.group(2), hp.host(), hp.port(), null, null, reason, addressClassOf(reason)));
    }
    Matcher http = HTTP.matcher(l);
    if (http.matches()) {
      String method = http.group(1).toUpperCase(Locale.ROOT);
      String target = http.group(2);
      String reason = http.group(3);
      boolean isUrl = target.contains("://");
      return (isUrl ? HostClassifier.fromUrl(target) : hostPort(target)).map(hp -> new SrtLine(Kind.NETWORK,
          "http-request", method, target, hp.host(), hp.port(), isUrl ? target : null, null, reason,
          addressClassOf(reason)));
    }
    Matcher fs = FILESYSTEM.matcher(l);
    if (fs.matches()) {
      return Optional.of(new SrtLine(Kind.FILESYSTEM, fs.group(1), null, fs.group(2), null, null,
          null, fs.group(2), null, null));
    }
    return Optional.empty();
  }

  /**
   * srt names the class ("resolved to a loopback address"), several joined by " / " when a name
   * resolved to more than one; the most dangerous one is kept.
   */
  static AddressClass addressClassOf(String reason) {
    int at = reason.indexOf(RESOLVED);
    if (at < 0) {
      return null;
    }
    AddressClass worst = null;
    for (String part : reason.substring(at + RESOLVED.length()).split(" / ")) {
      AddressClass c = fromWords(part.strip().replaceFirst("^an? ", "").replaceFirst(" address(es)?$", ""));
      if (worst == null || rank(c) > rank(worst)) {
        worst = c;
      }
    }
    return worst;
  }

  private static AddressClass fromWords(String words) {
    return switch (words) {
      case "loopback" -> AddressClass.LOOPBACK;
      case "link-local" -> AddressClass.LINK_LOCAL;
      case "cloud metadata" -> AddressClass.CLOUD_METADATA;
      case "private" -> AddressClass.PRIVATE;
      case "unspecified" -> AddressClass.UNSPECIFIED;
      case "multicast" -> AddressClass.MULTICAST;
      case "broadcast" -> AddressClass.BROADCAST;
      default -> AddressClass.UNKNOWN;
    };
  }

  private static int rank(AddressClass c) {
    return switch (c) {
      case CLOUD_METADATA -> 9;
      case LOOPBACK -> 8;
      case LINK_LOCAL -> 7;
      case UNSPECIFIED -> 6;
      case PRIVATE -> 5;
      case MULTICAST, BROADCAST -> 4;
      case UNKNOWN -> 2;
      case PUBLIC -> 1;
    };
  }

  /** {@code host:port} or {@code [v6]:port}: a port is required. */
  static Optional<HostPort> hostPort(String target) {
    return HostClassifier.hostPort(target).filter(hp -> hp.port() != null);
  }

}
