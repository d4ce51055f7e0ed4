package dev.knockwatch.streams.api;

import com.sun.net.httpserver.Filter;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ConcurrentHashMap;

/**
 * At most {@value #MAX_IN_FLIGHT} requests of one client address are handled at once; the next
 * is answered 429 with {@code Retry-After: 1} at once, before its token is checked, so one client
 * (authorised or not) cannot take the API's threads with slow or costly requests. A request whose
 * headers never arrive is the read timeout's (5 s): the JDK server reads headers before any filter
 * sees who sent them.
 */
final class PerClientLimit extends Filter {

  static final int MAX_IN_FLIGHT = 16;

  private final ConcurrentHashMap<InetAddress, Integer> inFlight = new ConcurrentHashMap<>();

  @Override
  public void doFilter(HttpExchange ex, Chain chain) throws IOException {
    InetAddress client = ex.getRemoteAddress().getAddress();
    int n = inFlight.merge(client, 1, Integer::sum);
    try {
      if (n > MAX_IN_FLIGHT) {
        byte[] body = ("{\"error\":\"more than " + MAX_IN_FLIGHT + " requests at once from this address\"}")
            .getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.getResponseHeaders().set("Retry-After", "1");
        ex.sendResponseHeaders(429, body.length);
        ex.getResponseBody().write(body);
        ex.close();
        return;
      }
      chain.doFilter(ex);
    } finally {
      // the entry goes with the client's last request, so addresses seen once are not kept
      inFlight.computeIfPresent(client, (k, v) -> v == 1 ? null : v - 1);
    }
  }

  @Override
  public String description() {
    return "at most " + MAX_IN_FLIGHT + " requests at once per client address";
  }
}
