package dev.knockwatch.streams.api;

import com.sun.net.httpserver.Filter;
import com.sun.net.httpserver.HttpExchange;
import io.prometheus.client.Counter;
import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The names the API and the console answer to: a request whose {@code Host} names anything else
 * is answered 421 (Misdirected Request) before its token is read. A page on another site that
 * rebinds its own name to this API's address (DNS rebinding) sends its own name as Host, so it is
 * refused. Served on by default: the bind address with the port; for a loopback bind,
 * {@code 127.0.0.1}, {@code localhost} and {@code [::1]}; for 0.0.0.0 (or ::), those and the
 * machine's host names and interface addresses; and the address the other instances reach this
 * one at ({@code application.server}), each with the port. More names are allowed with
 * {@link #parse}'s entries: {@code name} (any port), {@code name:port}, {@code [v6]:port}, or
 * {@code *} (any Host). A request without Host (HTTP/1.0: a shell's health check; a browser
 * always sends one) is answered. Refusals are counted ({@value #METRIC}); the 1st, 2nd, 4th, 8th
 * ... refusal is logged, its Host escaped and cut to {@value #MAX_LOGGED_CHARS} characters.
 */
final class AllowedHosts extends Filter {

  private static final Logger log = LoggerFactory.getLogger(AllowedHosts.class);

  static final int MISDIRECTED = 421;
  static final String METRIC = "knockwatch_api_misdirected_requests_total";
  static final int MAX_LOGGED_CHARS = 100;
  /** What the refusal says (the operator's option named, the request's Host never echoed). */
  static final String REFUSAL = "this server does not answer to the Host this request names; to reach it by that name, "
      + "add the name to --api-allowed-hosts (env KNOCKWATCH_API_ALLOWED_HOSTS)";

  private static final Counter REFUSED = Counter.build().name(METRIC)
      .help("Requests to the query API or console answered 421: their Host is not a name the API is served on "
          + "(--api-allowed-hosts)").register();

  /** {@code name:port}, lower case, a name's trailing dot dropped, an IPv6 address in brackets. */
  private final Set<String> exact = new TreeSet<>();
  /** Names allowed on any port. */
  private final Set<String> anyPort = new TreeSet<>();
  private final boolean any;
  /** The port a Host without one means: 443 over TLS, else 80. */
  private final int defaultPort;
  private final AtomicLong refused = new AtomicLong();

  /**
   * @param bind the address the API listens on, as given
   * @param port the port it listens on
   * @param advertised how the other instances reach it ({@code application.server}'s host), or null
   * @param advertisedPort that address's port
   * @param tls whether it serves HTTPS (a Host without a port then means 443)
   * @param also more entries ({@link #parse}), or none
   */
  AllowedHosts(String bind, int port, String advertised, int advertisedPort, boolean tls, Collection<String> also) {
    this.defaultPort = tls ? 443 : 80;
    boolean star = false;
    for (String entry : also) {
      String e = parse(entry);
      if (e.equals("*")) {
        star = true;
      } else if (e.endsWith(":*")) {
        anyPort.add(e.substring(0, e.length() - 2));
      } else {
        exact.add(e);
      }
    }
    this.any = star;
    for (String name : servedOn(bind)) {
      exact.add(name + ":" + port);
    }
    if (advertised != null && !advertised.isBlank()) {
      exact.add(name(advertised) + ":" + advertisedPort);
    }
  }

  /** What is allowed, for the log at start and the tests: {@code name:port}, {@code name:*}, or {@code *}. */
  List<String> describe() {
    if (any) {
      return List.of("*");
    }
    Set<String> out = new TreeSet<>(exact);
    anyPort.forEach(n -> out.add(n + ":*"));
    return List.copyOf(out);
  }

  /**
   * An entry of {@code --api-allowed-hosts} in its normal form: {@code *}, {@code name:port} or
   * {@code name:*} (no port given: any; a normal form reads as itself); an IllegalArgumentException
   * saying what is wrong with it.
   */
  static String parse(String entry) {
    String e = entry == null ? "" : entry.strip();
    if (e.equals("*")) {
      return e;
    }
    boolean anyPortGiven = e.endsWith(":*"); // the normal form read again
    HostPort hp = HostPort.of(anyPortGiven ? e.substring(0, e.length() - 2) : e);
    if (anyPortGiven && hp != null && hp.port() >= 0) {
      hp = null;
    }
    if (hp == null) {
      throw new IllegalArgumentException("not a host name or address, with or without :port: " + escaped(e));
    }
    return hp.name() + ":" + (hp.port() < 0 ? "*" : String.valueOf(hp.port()));
  }

  /**
   * A Host as it is compared: a name in lower case without a trailing dot, an IPv4 address, or an
   * IPv6 address in brackets in the JDK's full form ({@code [0:0:0:0:0:0:0:1]}).
   */
  static String name(String host) {
    String h = host.strip().toLowerCase(Locale.ROOT);
    if (h.startsWith("[") && h.endsWith("]")) {
      h = h.substring(1, h.length() - 1);
    }
    if (h.contains(":")) {
      try {
        return literal(InetAddress.getByName("[" + h + "]")); // in brackets: a literal, never a DNS lookup
      } catch (UnknownHostException e) {
        return "[" + h + "]"; // not an address: matches nothing served
      }
    }
    return h.endsWith(".") ? h.substring(0, h.length() - 1) : h;
  }

  /** The names and addresses a server bound to {@code bind} is reached by. */
  static Set<String> servedOn(String bind) {
    Set<String> out = new TreeSet<>();
    out.add(name(bind));
    InetAddress address;
    try {
      address = InetAddress.getByName(bind);
    } catch (UnknownHostException e) {
      return out; // the server could not have bound it either
    }
    out.add(literal(address));
    if (address.isLoopbackAddress() || address.isAnyLocalAddress()) {
      out.add("127.0.0.1");
      out.add("localhost");
      out.add(name("[::1]"));
    }
    if (address.isAnyLocalAddress()) {
      String env = System.getenv("HOSTNAME");
      if (env != null && !env.isBlank() && HostPort.of(env) != null) {
        out.add(name(env));
      }
      try {
        InetAddress local = InetAddress.getLocalHost();
        out.add(name(local.getHostName()));
        out.add(literal(local));
      } catch (UnknownHostException e) {
        // no name for this machine: its interfaces' addresses still serve
      }
      try {
        for (NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces())) {
          for (InetAddress a : Collections.list(nic.getInetAddresses())) {
            out.add(literal(a));
          }
        }
      } catch (SocketException e) {
        log.warn("the machine's addresses could not be listed ({}); the API answers to its names only", e.toString());
      }
    }
    return out;
  }

  /** An address as a Host names it: IPv4 dotted, IPv6 in brackets without its scope. */
  static String literal(InetAddress a) {
    String s = a.getHostAddress();
    if (a instanceof Inet6Address) {
      int scope = s.indexOf('%');
      s = "[" + (scope < 0 ? s : s.substring(0, scope)) + "]";
    }
    return s.toLowerCase(Locale.ROOT);
  }

  /** Whether a request with these Host headers is answered. */
  boolean allows(List<String> hostHeaders) {
    if (hostHeaders == null || hostHeaders.isEmpty()) {
      return true;
    }
    if (hostHeaders.size() > 1) {
      return false;
    }
    if (any) {
      return true;
    }
    HostPort hp = HostPort.of(hostHeaders.get(0));
    if (hp == null) {
      return false;
    }
    int port = hp.port() < 0 ? defaultPort : hp.port();
    return exact.contains(hp.name() + ":" + port) || anyPort.contains(hp.name());
  }

  @Override
  public void doFilter(HttpExchange ex, Chain chain) throws IOException {
    List<String> host = ex.getRequestHeaders().get("Host");
    if (allows(host)) {
      chain.doFilter(ex);
      return;
    }
    REFUSED.inc();
    long n = refused.incrementAndGet();
    if (Long.bitCount(n) == 1) {
      log.warn("refused request {} naming Host {} from {} (421; --api-allowed-hosts adds a name; only the 1st, 2nd, "
          + "4th ... refusal is logged)", n, escaped(String.join(", ", host)), ex.getRemoteAddress().getAddress());
    }
    byte[] body = Answers.error(REFUSAL).toString().getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().set("Content-Type", "application/json; charset=utf-8");
    ex.getResponseHeaders().set("Cache-Control", "no-store");
    ex.sendResponseHeaders(MISDIRECTED, body.length);
    ex.getResponseBody().write(body);
    ex.close();
  }

  /** Refusals so far by this filter. */
  long refused() {
    return refused.get();
  }

  /** Printable ASCII as it is, anything else as {@code \\uXXXX}, cut to {@value #MAX_LOGGED_CHARS} characters. */
  static String escaped(String s) {
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < s.length() && out.length() < MAX_LOGGED_CHARS; i++) {
      char c = s.charAt(i);
      if (c >= 0x20 && c < 0x7f && c != '\\') {
        out.append(c);
      } else {
        out.append(String.format("\\u%04x", (int) c));
      }
    }
    if (out.length() >= MAX_LOGGED_CHARS) {
      out.setLength(MAX_LOGGED_CHARS);
      out.append("... (").append(s.length()).append(" characters)");
    }
    return "\"" + out + "\"";
  }

  @Override
  public String description() {
    return "only requests naming a Host the API is served on";
  }

  /** A Host's name (as {@link #name}) and port (-1 when none): null when it is neither a name nor an address. */
  record HostPort(String name, int port) {

    static HostPort of(String raw) {
      if (raw == null || raw.isEmpty() || raw.length() > 300) {
        return null;
      }
      String s = raw.strip();
      String host;
      String port = null;
      if (s.startsWith("[")) {
        int close = s.indexOf(']');
        if (close < 0) {
          return null;
        }
        host = s.substring(1, close);
        String rest = s.substring(close + 1);
        if (!rest.isEmpty()) {
          if (!rest.startsWith(":")) {
            return null;
          }
          port = rest.substring(1);
        }
        if (host.isEmpty() || !host.chars().allMatch(c -> Character.digit(c, 16) >= 0 || c == ':' || c == '.')) {
          return null;
        }
      } else {
        int colon = s.indexOf(':');
        host = colon < 0 ? s : s.substring(0, colon);
        port = colon < 0 ? null : s.substring(colon + 1);
        if (host.isEmpty() || !host.chars().allMatch(c -> c < 0x7f && (Character.isLetterOrDigit(c) || c == '.' || c == '-' || c == '_'))) {
          return null;
        }
      }
      int p = -1;
      if (port != null) {
        if (port.isEmpty() || port.length() > 5 || !port.chars().allMatch(c -> c >= '0' && c <= '9')) {
          return null;
        }
        p = Integer.parseInt(port);
        if (p < 1 || p > 65535) {
          return null;
        }
      }
      return new HostPort(AllowedHosts.name(s.startsWith("[") ? "[" + host + "]" : host), p);
    }
  }
}
