package dev.knockwatch.streams.api;

import com.sun.net.httpserver.Filter;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;

/**
 * {@code X-Content-Type-Options: nosniff} on every answer of the API and the console, set before
 * any handler runs: JSON, errors, the console's pages, a mounted handler's (the silences) and a
 * filter's own (429, 421). A browser then never reads an answer as another type than it says
 * (a JSON body holding agent-written text as HTML or script).
 */
final class NoSniff extends Filter {

  static final String HEADER = "X-Content-Type-Options";

  @Override
  public void doFilter(HttpExchange ex, Chain chain) throws IOException {
    ex.getResponseHeaders().set(HEADER, "nosniff");
    chain.doFilter(ex);
  }

  @Override
  public String description() {
    return HEADER + ": nosniff on every answer";
  }
}
