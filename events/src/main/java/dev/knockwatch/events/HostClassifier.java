package dev.knockwatch.events;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Canonical host names and the address class of IP literals.
 *
 * <p>Never resolves a name: the agent chose it, and a lookup would both leak and be raced
 * (DNS rebinding). Only literals are classified; for names, the sandbox's own words ("resolved
 * to a loopback address") carry the class.
 */
public final class HostClassifier {

  public static final int MAX_HOST_CHARS = 253;

  private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(?:\\.\\d{1,3}){3}");
  private static final Pattern IPV6 = Pattern.compile("[0-9a-f:.]*:[0-9a-f:.]*(?:%[0-9a-z]+)?");
  private static final String METADATA_V4 = "169.254.169.254";

  private HostClassifier() {}

  /** Lower-case, no trailing dot, no IPv6 brackets, IPv6 literals in compressed form, unsafe characters removed. */
  public static String canonical(String host) {
    if (host == null) {
      return null;
    }
    String h = Sanitize.text(host.trim(), MAX_HOST_CHARS + 2).toLowerCase(Locale.ROOT);
    if (h.startsWith("[") && h.endsWith("]")) {
      h = h.substring(1, h.length() - 1);
    }
    while (h.endsWith(".")) {
      h = h.substring(0, h.length() - 1);
    }
    if (IPV6.matcher(h).matches()) {
      h = literal(h).map(HostClassifier::compressV6).orElse(h);
    }
    return h;
  }

  /** The class of an IP literal; empty for a name (which only the sandbox can classify). */
  public static Optional<AddressClass> classify(String canonicalHost) {
    return literal(canonicalHost).map(HostClassifier::classOf);
  }

  private static Optional<InetAddress> literal(String host) {
    if (host == null || !(IPV4.matcher(host).matches() || IPV6.matcher(host).matches())) {
      return Optional.empty();
    }
    if (IPV4.matcher(host).matches()) {
      for (String octet : host.split("\\.")) {
        if (Integer.parseInt(octet) > 255) {
          return Optional.empty();
        }
      }
    }
    try {
      // Safe: only called on strings that are literals, for which no lookup happens.
      return Optional.of(InetAddress.getByName(host));
    } catch (UnknownHostException | SecurityException e) {
      return Optional.empty();
    }
  }

  private static AddressClass classOf(InetAddress a) {
    if (a instanceof Inet4Address && a.getHostAddress().equals(METADATA_V4)) {
      return AddressClass.CLOUD_METADATA;
    }
    if (a instanceof Inet6Address && a.getHostAddress().startsWith("fd00:ec2:0:0:0:0:0:254")) {
      return AddressClass.CLOUD_METADATA;
    }
    if (a.isAnyLocalAddress()) {
      return AddressClass.UNSPECIFIED;
    }
    if (a.isLoopbackAddress()) {
      return AddressClass.LOOPBACK;
    }
    if (a.isLinkLocalAddress()) {
      return AddressClass.LINK_LOCAL;
    }
    if (a.isMulticastAddress()) {
      return AddressClass.MULTICAST;
    }
    if (a instanceof Inet4Address && a.getHostAddress().equals("255.255.255.255")) {
      return AddressClass.BROADCAST;
    }
    if (a.isSiteLocalAddress() || (a instanceof Inet6Address && (a.getAddress()[0] & 0xfe) == 0xfc)) {
      return AddressClass.PRIVATE;
    }
    return AddressClass.PUBLIC;
  }

  /** RFC 5952 form: the longest run of zero groups becomes "::". */
  private static String compressV6(InetAddress a) {
    if (!(a instanceof Inet6Address)) {
      return a.getHostAddress();
    }
    String[] groups = a.getHostAddress().replaceFirst("%.*$", "").split(":");
    int bestStart = -1;
    int bestLen = 1;
    for (int i = 0; i < groups.length; ) {
      if (groups[i].equals("0")) {
        int j = i;
        while (j < groups.length && groups[j].equals("0")) {
          j++;
        }
        if (j - i > bestLen) {
          bestStart = i;
          bestLen = j - i;
        }
        i = j;
      } else {
        i++;
      }
    }
    if (bestStart < 0) {
      return String.join(":", groups);
    }
    String head = String.join(":", java.util.Arrays.copyOfRange(groups, 0, bestStart));
    String tail = String.join(":", java.util.Arrays.copyOfRange(groups, bestStart + bestLen, groups.length));
    return head + "::" + tail;
  }
}
