package dev.knockwatch.streams.api;

import static dev.knockwatch.streams.api.Answers.error;
import static dev.knockwatch.streams.api.Answers.send;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import dev.knockwatch.events.Json;
import java.io.IOException;
import java.util.function.Supplier;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.errors.InvalidStateStoreException;

/**
 * {@code /-/healthy}: the process answers. {@code /-/ready}: the timeline is RUNNING, its store
 * answers, and so does anything {@link #also} adds; else 503 with the reason. Neither needs
 * the token (a load balancer's or orchestrator's check), neither tells anything of the data.
 */
final class Health implements HttpHandler {

  private final KafkaStreams streams;
  /** Asks the timeline's store something; an InvalidStateStoreException while it does not answer. */
  private final Runnable storeAnswers;
  private volatile Supplier<String> elsewhere = () -> null;

  Health(KafkaStreams streams, Runnable storeAnswers) {
    this.streams = streams;
    this.storeAnswers = storeAnswers;
  }

  /** Another condition of ready: null when met, else why not. */
  void also(Supplier<String> notReady) {
    this.elsewhere = notReady;
  }

  @Override
  public void handle(HttpExchange ex) throws IOException {
    try {
      String path = ex.getRequestURI().getPath();
      if (path.equals("/-/healthy")) {
        send(ex, 200, Json.MAPPER.createObjectNode().put("status", "healthy"));
      } else if (path.equals("/-/ready")) {
        String notReady = notReady();
        if (notReady == null) {
          send(ex, 200, Json.MAPPER.createObjectNode().put("status", "ready"));
        } else {
          ex.getResponseHeaders().add("Retry-After", "1");
          send(ex, 503, Json.MAPPER.createObjectNode().put("status", "not ready").put("reason", notReady));
        }
      } else {
        send(ex, 404, error("no such endpoint"));
      }
    } finally {
      ex.close();
    }
  }

  private String notReady() {
    if (streams.state() != KafkaStreams.State.RUNNING) {
      return "the timeline is " + streams.state();
    }
    try {
      storeAnswers.run();
    } catch (InvalidStateStoreException e) {
      return "the timeline's store does not answer yet";
    }
    return elsewhere.get();
  }
}
