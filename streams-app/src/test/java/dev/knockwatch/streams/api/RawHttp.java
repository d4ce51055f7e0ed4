package dev.knockwatch.streams.api;

import com.sun.net.httpserver.HttpHandler;
import dev.knockwatch.streams.TimelineTopology;
import dev.knockwatch.streams.rules.Policy;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsConfig;

/**
 * Requests written byte by byte to a real {@link QueryApi} on 127.0.0.1, so that a test chooses
 * every header, {@code Host} included (the JDK's HttpClient sets that one itself). The API's
 * timeline is never started: its stores answer 503, which is one more kind of answer.
 */
final class RawHttp {

  static final String TOKEN = "raw-http-test-token";

  private RawHttp() {}

  /** An answer: its status, its headers (names lower-cased, the first value of each) and body. */
  record Answer(int status, Map<String, String> headers, String body) {
    String header(String name) {
      return headers.get(name.toLowerCase(Locale.ROOT));
    }
  }

  /** A timeline that is never started (its bootstrap server is never reached). */
  static KafkaStreams idleTimeline(Path state) {
    Properties p = new Properties();
    p.put(StreamsConfig.APPLICATION_ID_CONFIG, "raw-http-test");
    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:9");
    p.put(StreamsConfig.STATE_DIR_CONFIG, state.toString());
    return new KafkaStreams(TimelineTopology.build(Policy.ofRules(List.of()), Duration.ofDays(1)), p);
  }

  /**
   * {@code GET path} over HTTP/1.1 with {@code host} as its Host header (none when null), the
   * token (unless an {@code Authorization} line is given), and the extra header lines given.
   */
  static Answer get(int port, String path, String host, String... headerLines) throws IOException {
    return request(port, "GET " + path + " HTTP/1.1", host, headerLines);
  }

  static Answer request(int port, String requestLine, String host, String... headerLines) throws IOException {
    StringBuilder req = new StringBuilder(requestLine).append("\r\n");
    if (host != null) {
      req.append("Host: ").append(host).append("\r\n");
    }
    if (java.util.Arrays.stream(headerLines).noneMatch(h -> h.regionMatches(true, 0, "Authorization:", 0, 14))) {
      req.append("Authorization: Bearer ").append(TOKEN).append("\r\n");
    }
    for (String h : headerLines) {
      req.append(h).append("\r\n");
    }
    req.append("Connection: close\r\n\r\n");
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(InetAddress.getByName("127.0.0.1"), port));
      s.setSoTimeout(30_000);
      OutputStream out = s.getOutputStream();
      out.write(req.toString().getBytes(StandardCharsets.UTF_8)); // a hostile header's raw UTF-8 bytes too
      out.flush();
      return parse(s.getInputStream());
    }
  }

  private static Answer parse(InputStream in) throws IOException {
    String raw = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    int end = raw.indexOf("\r\n\r\n");
    String head = end < 0 ? raw : raw.substring(0, end);
    String body = end < 0 ? "" : raw.substring(end + 4);
    String[] lines = head.split("\r\n");
    int status = Integer.parseInt(lines[0].split(" ")[1]);
    Map<String, String> headers = new LinkedHashMap<>();
    for (int i = 1; i < lines.length; i++) {
      int colon = lines[i].indexOf(':');
      if (colon > 0) {
        headers.putIfAbsent(lines[i].substring(0, colon).strip().toLowerCase(Locale.ROOT), lines[i].substring(colon + 1).strip());
      }
    }
    return new Answer(status, headers, body);
  }

  /** A handler that answers 200 {@code text/plain} itself, as a mounted handler (the silences) does. */
  static HttpHandler plainText(String text) {
    return ex -> {
      byte[] b = text.getBytes(StandardCharsets.UTF_8);
      ex.getResponseHeaders().set("Content-Type", "text/plain");
      ex.sendResponseHeaders(200, b.length);
      ex.getResponseBody().write(b);
      ex.close();
    };
  }
}
