package dev.knockwatch.streams.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.streams.api.RawHttp.Answer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.kafka.streams.KafkaStreams;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every kind of answer of the API and the console carries {@code X-Content-Type-Options: nosniff}:
 * JSON (200, 400, 401, 404, 405, 503), the console's pages and its 404, a mounted handler's own
 * answer, and the per-client limit's 429. Real HTTP on 127.0.0.1.
 */
class NoSniffTest {

  @TempDir Path state;

  @Test
  void everyKindOfAnswerSaysNosniff() throws Exception {
    try (KafkaStreams idle = RawHttp.idleTimeline(state);
         QueryApi api = new QueryApi(idle, RawHttp.TOKEN, "127.0.0.1", 0, null)) {
      CountDownLatch inFlight = new CountDownLatch(PerClientLimit.MAX_IN_FLIGHT);
      CountDownLatch release = new CountDownLatch(1);
      api.mount("/api/plain", RawHttp.plainText("a mounted handler's own answer"));
      api.mount("/api/held", ex -> {
        inFlight.countDown();
        try {
          release.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        RawHttp.plainText("released").handle(ex);
      });
      int port = api.port();
      String host = "127.0.0.1:" + port;
      Map<String, Answer> answers = new LinkedHashMap<>();
      answers.put("healthy", RawHttp.get(port, "/-/healthy", host));
      answers.put("ready (503)", RawHttp.get(port, "/-/ready", host));
      answers.put("openapi", RawHttp.get(port, "/api/v1/openapi.json", host));
      answers.put("no token (401)", RawHttp.get(port, "/api/v1/commands", host, "Authorization: Bearer wrong"));
      answers.put("POST (405)", RawHttp.request(port, "POST /api/v1/commands HTTP/1.1", host, "Content-Length: 0"));
      answers.put("no endpoint (404)", RawHttp.get(port, "/api/v1/nothing", host));
      answers.put("bad limit (400)", RawHttp.get(port, "/api/v1/commands?limit=0", host));
      answers.put("rebalancing (503)", RawHttp.get(port, "/api/v1/commands", host));
      answers.put("console page", RawHttp.get(port, "/", host));
      answers.put("console script", RawHttp.get(port, "/console.js", host));
      answers.put("console style", RawHttp.get(port, "/console.css", host));
      answers.put("console 404", RawHttp.get(port, "/nothing.html", host));
      answers.put("mounted handler", RawHttp.get(port, "/api/v1/plain", host));

      // the 429: the per-client limit's requests held in a handler, then one more
      ExecutorService pool = Executors.newFixedThreadPool(PerClientLimit.MAX_IN_FLIGHT);
      try {
        List<Future<Answer>> held = new ArrayList<>();
        for (int i = 0; i < PerClientLimit.MAX_IN_FLIGHT; i++) {
          held.add(pool.submit(() -> RawHttp.get(port, "/api/v1/held", host)));
        }
        inFlight.await();
        answers.put("too many (429)", RawHttp.get(port, "/api/v1/plain", host));
        release.countDown();
        for (Future<Answer> f : held) {
          assertThat(f.get().status()).isEqualTo(200);
        }
      } finally {
        release.countDown();
        pool.shutdown();
      }

      assertThat(answers).allSatisfy((what, a) ->
          assertThat(a.header("X-Content-Type-Options")).as(what + " " + a.status() + " " + a.headers()).isEqualTo("nosniff"));
      // and each is the kind of answer it is named for
      assertThat(answers.get("healthy").status()).isEqualTo(200);
      assertThat(answers.get("ready (503)").status()).isEqualTo(503);
      assertThat(answers.get("openapi").status()).isEqualTo(200);
      assertThat(answers.get("no token (401)").status()).isEqualTo(401);
      assertThat(answers.get("POST (405)").status()).isEqualTo(405);
      assertThat(answers.get("no endpoint (404)").status()).isEqualTo(404);
      assertThat(answers.get("bad limit (400)").status()).isEqualTo(400);
      assertThat(answers.get("rebalancing (503)").status()).isEqualTo(503);
      assertThat(answers.get("console page").status()).isEqualTo(200);
      assertThat(answers.get("console page").header("Content-Type")).startsWith("text/html");
      assertThat(answers.get("console script").status()).isEqualTo(200);
      assertThat(answers.get("console style").status()).isEqualTo(200);
      assertThat(answers.get("console 404").status()).isEqualTo(404);
      assertThat(answers.get("mounted handler").status()).isEqualTo(200);
      assertThat(answers.get("mounted handler").body()).isEqualTo("a mounted handler's own answer");
      assertThat(answers.get("too many (429)").status()).isEqualTo(429);
    }
  }
}
