package dev.knockwatch.streams.api;

import static dev.knockwatch.streams.api.Answers.error;
import static dev.knockwatch.streams.api.Answers.send;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;
import java.io.OutputStream;

/**
 * The console's static files at {@code /} (no data in them: the page asks the API, with the
 * token), under a Content-Security-Policy that lets no inline script run, whatever a page shows.
 * The charting library, uPlot, is served from its WebJar in the jar (pinned in the parent pom):
 * {@code /vendor/uPlot.iife.min.js} and {@code /vendor/uPlot.min.css}. The favicon, an SVG, is
 * {@code /favicon.ico} (where browsers ask for it), under the same headers.
 */
final class ConsoleFiles implements HttpHandler {

  /** Where the WebJar keeps uPlot's files: its version from the WebJar's own pom.properties. */
  static final String UPLOT = uplot();

  private static String uplot() {
    java.util.Properties p = new java.util.Properties();
    try (var in = ConsoleFiles.class.getResourceAsStream("/META-INF/maven/org.webjars.npm/uplot/pom.properties")) {
      if (in == null) {
        return null;
      }
      p.load(in);
    } catch (IOException e) {
      return null;
    }
    return "/META-INF/resources/webjars/uplot/" + p.getProperty("version") + "/dist/";
  }

  @Override
  public void handle(HttpExchange ex) throws IOException {
    try {
      String path = ex.getRequestURI().getPath();
      String file = switch (path) {
        case "/", "/index.html" -> "/console/index.html";
        case "/console.js", "/console.css", "/overview.js" -> "/console" + path;
        case "/favicon.ico" -> "/console/favicon.svg";
        case "/vendor/uPlot.iife.min.js", "/vendor/uPlot.min.css" -> UPLOT == null ? null
            : UPLOT + path.substring("/vendor/".length());
        default -> null;
      };
      byte[] body = null;
      if (file != null) {
        try (var in = ConsoleFiles.class.getResourceAsStream(file)) {
          body = in == null ? null : in.readAllBytes();
        }
      }
      if (body == null || !"GET".equals(ex.getRequestMethod())) {
        send(ex, 404, error("no such page"));
        return;
      }
      String type = file.endsWith(".js") ? "text/javascript" : file.endsWith(".css") ? "text/css"
          : file.endsWith(".svg") ? "image/svg+xml" : "text/html";
      ex.getResponseHeaders().set("Content-Type", type + "; charset=utf-8");
      // scripts and styles from this server only: no inline script can run, whatever a page shows
      ex.getResponseHeaders().set("Content-Security-Policy",
          "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; form-action 'self'");
      ex.getResponseHeaders().set("X-Content-Type-Options", "nosniff");
      ex.getResponseHeaders().set("Referrer-Policy", "no-referrer");
      ex.sendResponseHeaders(200, body.length);
      try (OutputStream os = ex.getResponseBody()) {
        os.write(body);
      }
    } finally {
      ex.close();
    }
  }
}
