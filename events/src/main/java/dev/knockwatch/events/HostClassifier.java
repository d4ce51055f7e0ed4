package dev.knockwatch.events;

import java.net.IDN;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Canonical host names and the address class of what a host names, as a sandbox's enforcement
 * sees them: {@code 127.1}, {@code 2130706433}, {@code 0x7f.1} and {@code ::ffff:127.0.0.1} are
 * all 127.0.0.1, {@code EXAMPLE.com.} is example.com, {@code bücher.de} is xn--bcher-kva.de.
 *
 * <p>Never resolves a name: the agent chose it, and a lookup would both leak and be raced
 * (DNS rebinding). Literals are classified by their address, a few names by a table
 * (localhost, cloud metadata names); for other names the sandbox's own words ("resolved to a
 * loopback address") carry the class.
 */
public final class HostClassifier {

  public static final int MAX_HOST_CHARS = 253;

  private static final Pattern URL =
      Pattern.compile("(?i)^([a-z][a-z0-9+.-]*)://(?:[^/@?#]*@)?(\\[[^\\]]*\\]|[^/:?#]*)(?::(\\d+))?");

  /**
   * Cloud instance-metadata and platform endpoints, as srt 0.0.83 lists them
   * ({@code dist/sandbox/resolved-address-guard.js}, {@code CLOUD_METADATA_ADDRESSES}), with the
   * link-local ones srt covers by 169.254.0.0/16 named too (AWS and GCP IMDS, ECS, EKS Pod Identity).
   */
  static final List<String> METADATA = List.of("169.254.169.254/32", "169.254.170.2/32", "169.254.170.23/32",
      "100.100.100.200/32", "168.63.129.16/32", "192.0.0.192/32", "fd00:ec2::/32", "fd20:ce::254/128",
      "fd00:c1::a9fe:a9fe/128", "fd00:42::42/128", "fd00:a9fe:a9fe::1/128", "fd00:100::100:200/128");

  /**
   * IANA's IPv4 and IPv6 special-purpose address registries (and the IPv6 address space registry
   * for what lies outside 2000::/3), first match wins; an address no range holds is public.
   * docs/FORMATS.md lists the table with its sources.
   */
  static final List<Range> RANGES = Range.table(
      "0.0.0.0/8 unspecified", "10.0.0.0/8 private", "100.64.0.0/10 cgnat", "127.0.0.0/8 loopback",
      "169.254.0.0/16 link-local", "172.16.0.0/12 private", "192.0.0.0/24 reserved", "192.0.2.0/24 reserved",
      "192.88.99.0/24 reserved", "192.168.0.0/16 private", "198.18.0.0/15 reserved", "198.51.100.0/24 reserved",
      "203.0.113.0/24 reserved", "224.0.0.0/4 multicast", "255.255.255.255/32 broadcast", "240.0.0.0/4 reserved",
      "::/128 unspecified", "::1/128 loopback", "100::/64 reserved", "2001:db8::/32 reserved", "2001::/23 reserved",
      "3fff::/20 reserved", "5f00::/16 reserved", "fc00::/7 private", "fe80::/10 link-local", "fec0::/10 private",
      "ff00::/8 multicast", "2000::/3 public", "::/0 reserved");

  /** One range of {@link #RANGES} or {@link #METADATA}: its address's bytes, its prefix length, its class. */
  record Range(byte[] address, int prefix, AddressClass type) {

    static List<Range> table(String... rows) {
      return Arrays.stream(rows).map(r -> {
        String[] parts = r.split(" ");
        return of(parts[0], Arrays.stream(AddressClass.values()).filter(c -> c.wireName().equals(parts[1]))
            .findFirst().orElseThrow());
      }).toList();
    }

    static Range of(String cidr, AddressClass type) {
      int slash = cidr.indexOf('/');
      byte[] a = v6(cidr.substring(0, slash)).or(() -> v6("::ffff:" + cidr.substring(0, slash)))
          .map(InetAddress::getAddress).orElseThrow();
      return new Range(a, Integer.parseInt(cidr.substring(slash + 1)), type);
    }

    boolean holds(byte[] b) {
      if (b.length != address.length) {
        return false;
      }
      int full = prefix / 8;
      for (int i = 0; i < full; i++) {
        if (b[i] != address[i]) {
          return false;
        }
      }
      int bits = prefix % 8;
      return bits == 0 || ((b[full] ^ address[full]) & (0xff << (8 - bits)) & 0xff) == 0;
    }
  }

  private static final List<Range> METADATA_RANGES = METADATA.stream().map(m -> Range.of(m, AddressClass.CLOUD_METADATA))
      .toList();

  /** Names that reach the metadata service from inside a cloud. */
  private static final Set<String> METADATA_NAMES = Set.of(
      "metadata.google.internal", "metadata.goog", "metadata", "instance-data", "instance-data.ec2.internal",
      "metadata.azure.com", "metadata.platformequinix.com");

  private HostClassifier() {}

  /** A host and an optional port, split from {@code host:port} or {@code [v6]:port}. */
  public record HostPort(String host, Integer port) {}

  /**
   * Splits a target such as {@code example.com:443}, {@code [::1]:8080}, {@code ::1} (no port:
   * a bare v6 literal keeps all its colons) and canonicalizes the host.
   */
  public static Optional<HostPort> hostPort(String target) {
    if (target == null || target.isBlank()) {
      return Optional.empty();
    }
    String t = target.strip();
    String host = t;
    Integer port = null;
    if (t.startsWith("[")) {
      int close = t.indexOf(']');
      if (close < 0) {
        return Optional.empty();
      }
      host = t.substring(1, close);
      String rest = t.substring(close + 1);
      if (!rest.isEmpty()) {
        if (!rest.startsWith(":")) {
          return Optional.empty();
        }
        port = port(rest.substring(1));
        if (port == null) {
          return Optional.empty();
        }
      }
    } else if (t.indexOf(':') >= 0 && t.indexOf(':') == t.lastIndexOf(':')) {
      host = t.substring(0, t.indexOf(':'));
      port = port(t.substring(t.indexOf(':') + 1));
      if (port == null) {
        return Optional.empty();
      }
    }
    if (host.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(new HostPort(canonical(host), port));
  }

  /**
   * The host and port an absolute URL names ({@code https://user@host:8443/x}); without a port,
   * the scheme's (http and ws 80, https and wss 443, ftp 21). Empty when it is no absolute URL.
   */
  public static Optional<HostPort> fromUrl(String url) {
    if (url == null) {
      return Optional.empty();
    }
    Matcher m = URL.matcher(url);
    if (!m.find() || m.group(2).isEmpty()) {
      return Optional.empty();
    }
    String port = m.group(3);
    if (port == null) {
      port = switch (m.group(1).toLowerCase(Locale.ROOT)) {
        case "https", "wss" -> "443";
        case "ftp" -> "21";
        default -> "80";
      };
    }
    return hostPort(m.group(2) + ":" + port);
  }

  /** {@code host:port}, {@code [v6]:port}, a bare host, or an absolute URL. */
  public static Optional<HostPort> target(String target) {
    return target != null && target.contains("://") ? fromUrl(target) : hostPort(target);
  }

  private static Integer port(String digits) {
    if (digits.isEmpty() || digits.length() > 5) {
      return null;
    }
    int p = 0;
    for (int i = 0; i < digits.length(); i++) {
      char c = digits.charAt(i);
      if (c < '0' || c > '9') {
        return null;
      }
      p = p * 10 + (c - '0');
    }
    return p <= 65535 ? p : null;
  }

  /** Lower-case ASCII letters, digits, '-' and inner dots, not all digits: already canonical (the common case). */
  private static boolean isPlainName(String h) {
    int n = h.length();
    if (n == 0 || n > MAX_HOST_CHARS || h.charAt(n - 1) == '.') {
      return false;
    }
    boolean letter = false;
    for (int i = 0; i < n; i++) {
      char c = h.charAt(i);
      if (c >= 'a' && c <= 'z') {
        letter = true;
      } else if (!((c >= '0' && c <= '9') || c == '-' || c == '.')) {
        return false;
      }
    }
    // "0x7f.1" has letters yet is a number; names whose labels all start with a digit go the long way
    return letter && !(h.charAt(0) == '0' && n > 1 && h.charAt(1) == 'x') && !looksNumericV4(h);
  }

  /** The host as enforcement sees it; unsafe characters removed, length bounded. */
  public static String canonical(String host) {
    if (host == null) {
      return null;
    }
    if (isPlainName(host) || dottedQuad(host) >= 0) {
      return host;
    }
    String h = Sanitize.text(host.strip(), MAX_HOST_CHARS + 2).toLowerCase(Locale.ROOT);
    if (h.startsWith("[") && h.endsWith("]")) {
      h = h.substring(1, h.length() - 1);
    }
    while (h.endsWith(".")) {
      h = h.substring(0, h.length() - 1);
    }
    if (looksV6(h)) {
      return v6(h).map(HostClassifier::text).orElse(h);
    }
    OptionalLong v4 = numericV4(h);
    if (v4.isPresent()) {
      return dotted(v4.getAsLong());
    }
    try {
      return IDN.toASCII(h, IDN.ALLOW_UNASSIGNED).toLowerCase(Locale.ROOT);
    } catch (IllegalArgumentException e) {
      return h;
    }
  }

  /** Whether {@code host} is an address written out (v4 in any of inet_aton's forms, or v6), not a name. */
  public static boolean isIpLiteral(String host) {
    String h = canonical(host);
    if (h == null || h.isEmpty()) {
      return false;
    }
    return h.indexOf(':') >= 0 ? v6(h).isPresent() : numericV4(h).isPresent();
  }

  /** The class of what {@code host} names; empty for a name only DNS could classify. */
  public static Optional<AddressClass> classify(String host) {
    long quad = host == null ? -1 : dottedQuad(host);
    if (quad >= 0) {
      return Optional.of(classOfV4(quad));
    }
    String h = canonical(host);
    if (h == null || h.isEmpty()) {
      return Optional.empty();
    }
    if (METADATA_NAMES.contains(h)) {
      return Optional.of(AddressClass.CLOUD_METADATA);
    }
    if (h.equals("localhost") || h.endsWith(".localhost")) {
      return Optional.of(AddressClass.LOOPBACK);
    }
    if (h.indexOf(':') >= 0) {
      return v6(h).map(HostClassifier::classOf);
    }
    OptionalLong v4 = numericV4(h);
    return v4.isPresent() ? Optional.of(classOfV4(v4.getAsLong())) : Optional.empty();
  }

  /**
   * inet_aton's forms, as curl and the C library accept them: 1 to 4 parts, each decimal, octal
   * (leading 0) or hex (0x); the last part fills the remaining bytes ({@code 127.1} = 127.0.0.1).
   */
  static OptionalLong numericV4(String h) {
    if (!looksNumericV4(h)) {
      return OptionalLong.empty();
    }
    String[] parts = h.split("\\.", -1);
    long value = 0;
    for (int i = 0; i < parts.length; i++) {
      OptionalLong part = number(parts[i]);
      if (part.isEmpty()) {
        return OptionalLong.empty();
      }
      long v = part.getAsLong();
      boolean last = i == parts.length - 1;
      long max = last ? (1L << (8 * (4 - i))) - 1 : 255;
      if (v > max) {
        return OptionalLong.empty();
      }
      value = last ? value | v : value | (v << (8 * (3 - i)));
    }
    return OptionalLong.of(value);
  }

  /**
   * The address of a canonical dotted quad ({@code 10.0.0.5}: four decimal parts of at most 255,
   * no leading zeros), else -1. The common IPv4 literal, read without the general path's copies.
   */
  private static long dottedQuad(String h) {
    int n = h.length();
    if (n < 7 || n > 15) {
      return -1;
    }
    long value = 0;
    int i = 0;
    for (int part = 0; part < 4; part++) {
      int start = i;
      int v = 0;
      while (i < n && h.charAt(i) >= '0' && h.charAt(i) <= '9') {
        v = v * 10 + (h.charAt(i) - '0');
        i++;
      }
      int digits = i - start;
      if (digits == 0 || digits > 3 || v > 255 || (digits > 1 && h.charAt(start) == '0')) {
        return -1;
      }
      value = (value << 8) | v;
      if (part < 3) {
        if (i >= n || h.charAt(i) != '.') {
          return -1;
        }
        i++;
      }
    }
    return i == n ? value : -1;
  }

  /** One to four dot-separated parts, each a digit followed by digits, hex letters or 'x'. */
  private static boolean looksNumericV4(String h) {
    int parts = 1;
    boolean partStart = true;
    for (int i = 0; i < h.length(); i++) {
      char c = h.charAt(i);
      if (partStart) {
        if (c < '0' || c > '9') {
          return false;
        }
        partStart = false;
      } else if (c == '.') {
        if (++parts > 4) {
          return false;
        }
        partStart = true;
      } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == 'x')) {
        return false;
      }
    }
    return !partStart;
  }

  /** Only hex digits, ':' and '.', with at least one ':'. */
  private static boolean looksV6(String h) {
    boolean colon = false;
    for (int i = 0; i < h.length(); i++) {
      char c = h.charAt(i);
      if (c == ':') {
        colon = true;
      } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || c == '.')) {
        return false;
      }
    }
    return colon;
  }

  private static OptionalLong number(String s) {
    try {
      if (s.startsWith("0x")) {
        return s.length() > 2 && s.length() <= 10 ? OptionalLong.of(Long.parseLong(s.substring(2), 16)) : OptionalLong.empty();
      }
      if (s.contains("x") || s.length() > 12) {
        return OptionalLong.empty();
      }
      if (s.length() > 1 && s.startsWith("0")) {
        return OptionalLong.of(Long.parseLong(s.substring(1), 8));
      }
      return OptionalLong.of(Long.parseLong(s));
    } catch (NumberFormatException e) {
      return OptionalLong.empty();
    }
  }

  private static String dotted(long v) {
    return ((v >> 24) & 255) + "." + ((v >> 16) & 255) + "." + ((v >> 8) & 255) + "." + (v & 255);
  }

  private static Optional<InetAddress> v6(String h) {
    try {
      // Safe: only strings made of hex digits, colons and dots get here; no lookup happens.
      return Optional.of(InetAddress.getByName(h.indexOf(':') >= 0 ? "[" + h + "]" : h));
    } catch (UnknownHostException | SecurityException e) {
      return Optional.empty();
    }
  }

  /** IPv4 (also for v4-mapped v6, which Java returns as Inet4Address) or RFC 5952 compressed v6. */
  private static String text(InetAddress a) {
    if (a instanceof Inet4Address) {
      return a.getHostAddress();
    }
    String[] groups = a.getHostAddress().replaceFirst("%.*$", "").split(":");
    int bestStart = -1;
    int bestLen = 1;
    for (int i = 0; i < groups.length; ) {
      int j = i;
      while (j < groups.length && groups[j].equals("0")) {
        j++;
      }
      if (j - i > bestLen) {
        bestStart = i;
        bestLen = j - i;
      }
      i = j == i ? i + 1 : j;
    }
    if (bestStart < 0) {
      return String.join(":", groups);
    }
    return String.join(":", Arrays.copyOfRange(groups, 0, bestStart)) + "::"
        + String.join(":", Arrays.copyOfRange(groups, bestStart + bestLen, groups.length));
  }

  /**
   * The class of an address: a cloud metadata endpoint first; an IPv6 address that carries an
   * IPv4 one (mapped, compatible, translated, NAT64 well-known and local-use /96, 6to4: srt's
   * {@code embeddedIPv4} in {@code dist/sandbox/address.js}) is the class of that IPv4 address;
   * else the first special-purpose range that holds it.
   */
  private static AddressClass classOf(InetAddress a) {
    byte[] b = a.getAddress();
    if (b.length == 16) {
      byte[] v4 = embeddedV4(b);
      if (v4 != null) {
        return classOf(v4);
      }
    }
    return classOf(b);
  }

  private static AddressClass classOf(byte[] b) {
    for (Range r : METADATA_RANGES) {
      if (r.holds(b)) {
        return AddressClass.CLOUD_METADATA;
      }
    }
    for (Range r : RANGES) {
      if (r.holds(b)) {
        return r.type();
      }
    }
    return AddressClass.PUBLIC;
  }

  private static AddressClass classOfV4(long v) {
    return classOf(new byte[] {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v});
  }

  /** The IPv4 address an IPv6 address delivers to, or null. {@code ::} and {@code ::1} carry none. */
  static byte[] embeddedV4(byte[] b) {
    int g0 = word(b, 0);
    if (g0 == 0x2002) {
      return Arrays.copyOfRange(b, 2, 6); // 6to4
    }
    byte[] low = Arrays.copyOfRange(b, 12, 16);
    boolean zero0to4 = word(b, 2) == 0 && word(b, 4) == 0 && word(b, 6) == 0 && g0 == 0;
    if (g0 == 0x64 && word(b, 2) == 0xff9b && word(b, 4) == 0 && word(b, 6) == 0 && word(b, 8) == 0 && word(b, 10) == 0) {
      return low; // NAT64 well-known prefix, 64:ff9b::/96
    }
    if (g0 == 0x64 && word(b, 2) == 0xff9b && word(b, 4) == 1 && word(b, 6) == 0 && word(b, 8) == 0 && word(b, 10) == 0) {
      return low; // local-use NAT64 64:ff9b:1::/48, at its /96 layout
    }
    if (zero0to4 && word(b, 8) == 0 && (word(b, 10) == 0 || word(b, 10) == 0xffff)) {
      // IPv4-compatible (::a.b.c.d) and mapped (::ffff:a.b.c.d); :: and ::1 are IPv6's own
      return word(b, 10) == 0 && word(b, 12) == 0 && (word(b, 14) == 0 || word(b, 14) == 1) ? null : low;
    }
    if (zero0to4 && word(b, 8) == 0xffff && word(b, 10) == 0) {
      return low; // IPv4-translated, ::ffff:0:a.b.c.d
    }
    return null;
  }

  private static int word(byte[] b, int i) {
    return (b[i] & 0xff) << 8 | (b[i + 1] & 0xff);
  }
}
