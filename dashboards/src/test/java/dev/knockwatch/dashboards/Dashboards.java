package dev.knockwatch.dashboards;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/** The shipped dashboards and the PromQL of their panels, as the tests read them. */
final class Dashboards {

  static final Path ROOT = Path.of("").toAbsolutePath();
  static final Path REPO = ROOT.getParent();
  static final Path DIR = ROOT.resolve("grafana/dashboards");
  static final ObjectMapper JSON = new ObjectMapper();

  /** One query of one panel. */
  record Query(String dashboard, String panel, String expr) {}

  private Dashboards() {}

  /** Runs a tool of the machine (promtool, amtool) in {@code dir}; it must exit 0. Its output. */
  static String run(Path dir, String... command) throws Exception {
    Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(String.join(" ", command) + "\n" + out).isZero();
    return out;
  }

  static List<Path> files() {
    try (Stream<Path> s = Files.list(DIR)) {
      return s.filter(p -> p.toString().endsWith(".json")).sorted().toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static JsonNode read(Path file) {
    try {
      return JSON.readTree(file.toFile());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static List<Query> queries(Path file) {
    JsonNode d = read(file);
    List<Query> out = new ArrayList<>();
    for (JsonNode p : d.path("panels")) {
      for (JsonNode t : p.path("targets")) {
        out.add(new Query(d.path("uid").asText(), p.path("title").asText(), t.path("expr").asText()));
      }
    }
    return out;
  }

  /** The expression as Prometheus gets it once Grafana filled the variables in (every role). */
  static String resolved(String expr) {
    return expr.replace("\"$role\"", "\".*\"").replace("$__rate_interval", "5m");
  }
}
