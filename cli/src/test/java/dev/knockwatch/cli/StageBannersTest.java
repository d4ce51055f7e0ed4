package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.testkit.EmbeddedKafkaExtension;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The stages a deployment runs apart ({@code ingest}, {@code streams}, {@code notify}), each
 * started by the launcher against a running Kafka: the banner says where its metrics are as a URL
 * (it once printed a Java object), and that URL answers.
 */
@Tag("integration")
@ExtendWith(EmbeddedKafkaExtension.class)
class StageBannersTest {

  static final Pattern METRICS_URL = Pattern.compile("http://127\\.0\\.0\\.1:(\\d+)/metrics");

  @TempDir Path dir;

  @Test
  void eachStagesBannerGivesTheUrlOfItsMetrics(EmbeddedKafkaBroker broker) throws Exception {
    Map<String, String[]> stages = Map.of(
        "ingest", new String[] {"--logs", dir.resolve("logs").toString()},
        "streams", new String[] {"--api-port", String.valueOf(Launched.freePort())},
        "notify", new String[] {});
    for (Map.Entry<String, String[]> stage : stages.entrySet()) {
      String name = stage.getKey();
      String[] args = new String[6 + stage.getValue().length];
      args[0] = name;
      args[1] = "--bootstrap-servers";
      args[2] = broker.bootstrapServers();
      args[3] = "--metrics-port";
      args[4] = String.valueOf(Launched.freePort());
      args[5] = "--var=" + dir.resolve(name + "-var");
      if (name.equals("notify")) {
        args[5] = "--group=banner-test-notify";
      }
      System.arraycopy(stage.getValue(), 0, args, 6, stage.getValue().length);
      try (Launched process = Launched.start(Launched.REPO, dir.resolve(name), Map.of(), args)) {
        String line = process.awaitLine("metrics", Duration.ofMinutes(3));
        assertThat(line).as(name + "'s banner").doesNotContain("@").doesNotContain("$");
        Matcher m = METRICS_URL.matcher(line);
        assertThat(m.find()).as(name + "'s banner gives its metrics as a URL: " + line).isTrue();
        assertThat(m.group(1)).isEqualTo(args[4]);
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(m.group())).build(),
            HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).contains("jvm_memory_bytes_used");
        process.stop(Duration.ofSeconds(60));
      }
    }
  }
}
