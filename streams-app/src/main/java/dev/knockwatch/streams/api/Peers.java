package dev.knockwatch.streams.api;

import static dev.knockwatch.streams.api.Answers.error;
import static dev.knockwatch.streams.api.Answers.send;
import static dev.knockwatch.streams.api.Answers.sendBytes;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpExchange;
import dev.knockwatch.events.Json;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.state.HostInfo;

/**
 * The other instances of the timeline ({@code application.server}): a command another instance
 * owns is asked of it, and a list gathers every instance's part. A request one instance forwards
 * carries {@link #FORWARDED} and is answered from the stores of the instance it reached, never
 * forwarded again; with TLS, peers are reached over https and their certificates verified.
 */
final class Peers {

  static final String FORWARDED = "X-Knockwatch-Forwarded";

  private final KafkaStreams streams;
  /** This instance's {@code application.server}; null when it runs alone. */
  private final HostInfo self;
  private final String scheme;
  private final HttpClient http;

  Peers(KafkaStreams streams, HostInfo self, String scheme, HttpClient http) {
    this.streams = streams;
    this.self = self;
    this.scheme = scheme;
    this.http = http;
  }

  /** {@code ex}'s GET, with its token, sent on to {@code host}: its path, then {@code query}; marked forwarded. */
  private HttpRequest request(HttpExchange ex, HostInfo host, String query) {
    return HttpRequest.newBuilder(URI.create(scheme + "://" + host.host() + ":" + host.port()
            + ex.getRequestURI().getRawPath() + query))
        .timeout(Duration.ofSeconds(5))
        .header("Authorization", ex.getRequestHeaders().getFirst("Authorization"))
        .header(FORWARDED, "1").GET().build();
  }

  /** Whether another instance sent this request (it is answered here, and goes nowhere else). */
  static boolean forwarded(HttpExchange ex) {
    return ex.getRequestHeaders().getFirst(FORWARDED) != null;
  }

  /** The request answered by the instance that holds its command, as that instance answers it. */
  void forward(HttpExchange ex, HostInfo owner) throws IOException {
    HttpRequest req = request(ex, owner, "");
    try {
      HttpResponse<byte[]> r = http.send(req, HttpResponse.BodyHandlers.ofByteArray());
      r.headers().firstValue("Retry-After").ifPresent(v -> ex.getResponseHeaders().add("Retry-After", v));
      sendBytes(ex, r.statusCode(), r.body());
    } catch (IOException e) {
      ex.getResponseHeaders().add("Retry-After", "1");
      send(ex, 503, error("the instance that holds this command (" + owner.host() + ":" + owner.port()
          + ") does not answer"));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      send(ex, 503, error("interrupted"));
    }
  }

  /**
   * The same list from every other instance (each answers for its own partitions), for a request
   * that was not itself forwarded. An instance that does not answer makes the list 503: a list
   * with a hole would look complete.
   */
  List<JsonNode> fromOthers(HttpExchange ex, String field) {
    List<JsonNode> out = new ArrayList<>();
    if (self == null || forwarded(ex)) {
      return out;
    }
    for (var meta : streams.metadataForAllStreamsClients()) {
      HostInfo host = meta.hostInfo();
      if (host.equals(self) || host.port() <= 0) {
        continue;
      }
      String query = ex.getRequestURI().getRawQuery();
      HttpRequest req = request(ex, host, query == null ? "" : "?" + query);
      try {
        HttpResponse<byte[]> r = http.send(req, HttpResponse.BodyHandlers.ofByteArray());
        if (r.statusCode() != 200) {
          throw new InvalidStateStoreException("instance " + host + " answered " + r.statusCode());
        }
        Json.MAPPER.readTree(r.body()).path(field).forEach(out::add);
      } catch (IOException e) {
        throw new InvalidStateStoreException("instance " + host + " does not answer");
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new InvalidStateStoreException("interrupted");
      }
    }
    return out;
  }
}
