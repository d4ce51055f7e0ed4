package dev.knockwatch.dashboards;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * docker-compose.yml, checked without Docker (no engine runs here): what it references exists,
 * host ports do not clash, images are pinned, the environment names are the ones knockwatch reads,
 * no secret is written in it, and Prometheus scrapes the ports the stages serve /metrics on.
 */
class DockerComposeTest {

  static final Path REPO = Dashboards.REPO;
  static final List<String> KAFKA_NODES = List.of("kafka-1", "kafka-2", "kafka-3");
  static Map<String, Object> compose;
  static Map<String, Map<String, Object>> services;

  @BeforeAll
  @SuppressWarnings("unchecked")
  static void load() throws IOException {
    compose = new Yaml().load(Files.readString(REPO.resolve("docker-compose.yml")));
    services = (Map<String, Map<String, Object>>) compose.get("services");
  }

  static Set<String> knockwatchServices() {
    return services.entrySet().stream()
        .filter(e -> String.valueOf(e.getValue().get("image")).startsWith("knockwatch/"))
        .map(Map.Entry::getKey).collect(Collectors.toCollection(TreeSet::new));
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> env(String service) {
    Object e = services.get(service).get("environment");
    return e == null ? Map.of() : (Map<String, Object>) e;
  }

  @Test
  void theStackHasEveryPart() {
    assertThat(services).containsKeys("kafka-1", "kafka-2", "kafka-3", "topics", "ingest", "streams", "notify",
        "prometheus", "alertmanager", "grafana");
    assertThat(knockwatchServices()).containsExactly("export", "ingest", "ingest-raw", "notify", "streams", "topics");
    assertThat(services.get("ingest-raw").get("profiles")).as("the shipper's stage only when asked for")
        .isEqualTo(List.of("shipper"));
    assertThat(services.get("ingest-raw").get("command")).isEqualTo(List.of("ingest", "--raw-topic", "knockwatch.raw",
        "--var", "/var/lib/knockwatch"));
    assertThat(services.get("export").get("profiles")).as("the export stage only when asked for").isEqualTo(List.of("export"));
    assertThat(services.get("export").get("command")).isEqualTo(List.of("export"));
    assertThat(env("export")).containsEntry("KNOCKWATCH_EXPORT_FORMAT", "${KNOCKWATCH_EXPORT_FORMAT:-ocsf}");
    assertThat(services.get("topics").get("restart")).isEqualTo("no");
    // the OTLP endpoint: the agents' harnesses (or a Collector) reach it on 4318, tokens from their own volume
    assertThat(env("ingest")).containsEntry("KNOCKWATCH_OTLP_PORT", "4318").containsEntry("KNOCKWATCH_OTLP_BIND", "0.0.0.0");
    assertThat(services.get("ingest").get("ports")).isEqualTo(List.of("127.0.0.1:4318:4318"));
    assertThat((List<?>) services.get("ingest").get("volumes")).anySatisfy(v -> assertThat(v.toString())
        .endsWith(":/var/lib/knockwatch/otlp/tokens:ro"));
    assertThat(services.get("prometheus").get("profiles")).isEqualTo(List.of("monitoring"));
    assertThat(services.get("alertmanager").get("profiles")).isEqualTo(List.of("monitoring"));
    services.forEach((name, s) -> {
      if (!name.equals("topics")) {
        assertThat(s).as(name + " healthcheck").containsKey("healthcheck");
      }
    });
  }

  @Test
  @SuppressWarnings("unchecked")
  void everyFileItReferencesExists() {
    for (Map<String, Object> s : services.values()) {
      if (s.get("build") instanceof Map<?, ?> b) {
        Path context = REPO.resolve(String.valueOf(b.get("context")));
        assertThat(context.resolve(String.valueOf(b.get("dockerfile")))).isRegularFile();
      }
      for (Object v : (List<Object>) s.getOrDefault("volumes", List.of())) {
        String source = String.valueOf(v).split(":")[0];
        if (source.startsWith("./")) {
          assertThat(REPO.resolve(source)).as(String.valueOf(v)).exists();
        }
      }
    }
    // Grafana reads the dashboards where the provisioning says, from the folder mounted there
    assertThat(String.join("\n", (List<String>) services.get("grafana").get("volumes")))
        .contains("./dashboards/grafana/dashboards:/var/lib/grafana/dashboards/knockwatch:ro");
    assertThat(REPO.resolve("dashboards/grafana/provisioning/dashboards/knockwatch.yaml"))
        .content().contains("path: /var/lib/grafana/dashboards/knockwatch");
    assertThat(REPO.resolve("dashboards/prometheus/rules/knockwatch-pipeline.rules.yml")).isRegularFile();
    assertThat(REPO.resolve(".dockerignore")).content().contains("**/target");
  }

  @Test
  @SuppressWarnings("unchecked")
  void hostPortsDoNotClashAndListenOnLoopbackOnly() {
    Set<String> seen = new HashSet<>();
    for (Map.Entry<String, Map<String, Object>> e : services.entrySet()) {
      for (Object p : (List<Object>) e.getValue().getOrDefault("ports", List.of())) {
        String[] parts = String.valueOf(p).split(":");
        assertThat(parts).as(e.getKey() + " " + p).hasSize(3);
        assertThat(parts[0]).as(e.getKey() + " " + p).isEqualTo("127.0.0.1");
        assertThat(seen.add(parts[1])).as("host port " + parts[1] + " twice").isTrue();
      }
    }
    assertThat(seen).containsExactlyInAnyOrder("8080", "9090", "9093", "3000", "4318");
  }

  @Test
  void imagesArePinnedAndKafkaMatchesTheClients() throws IOException {
    String pom = Files.readString(REPO.resolve("pom.xml"));
    Matcher kafka = Pattern.compile("<kafka.version>([^<]+)</kafka.version>").matcher(pom);
    assertThat(kafka.find()).isTrue();
    services.forEach((name, s) -> {
      String image = String.valueOf(s.get("image"));
      assertThat(image).as(name).matches("[a-z0-9./-]+:v?\\d+\\.\\d+\\.\\d+");
    });
    for (String node : KAFKA_NODES) {
      assertThat(services.get(node).get("image")).isEqualTo("apache/kafka:" + kafka.group(1));
    }
    assertThat(String.valueOf(services.get("ingest").get("image"))).isEqualTo("knockwatch/knockwatch:0.1.0");
    assertThat(Files.readString(REPO.resolve("Dockerfile")))
        .containsPattern("(?m)^FROM maven:\\d+\\.\\d+\\.\\d+-eclipse-temurin-17 AS build$")
        .containsPattern("(?m)^FROM eclipse-temurin:17\\.[0-9._]+-jre$");
  }

  /** Every KNOCKWATCH_* (and receivers.yaml) name the app reads: picocli env defaults, getenv, ${VAR} in receivers. */
  static Set<String> namesTheAppReads() throws IOException {
    Set<String> names = new TreeSet<>();
    Pattern picocli = Pattern.compile("\\$\\{env:([A-Z0-9_]+)");
    Pattern getenv = Pattern.compile("getenv\\(\"([A-Z0-9_]+)\"\\)");
    try (Stream<Path> s = Files.walk(REPO)) {
      for (Path p : s.filter(f -> f.toString().endsWith(".java") && f.toString().contains("/src/main/java/")).toList()) {
        String text = Files.readString(p);
        for (Pattern pat : List.of(picocli, getenv)) {
          Matcher m = pat.matcher(text);
          while (m.find()) {
            names.add(m.group(1));
          }
        }
      }
    }
    Matcher m = Pattern.compile("\\$\\{([A-Z0-9_]+)").matcher(Files.readString(REPO.resolve("alert-rules/receivers.example.yaml")));
    while (m.find()) {
      names.add(m.group(1));
    }
    return names;
  }

  @Test
  void theEnvironmentNamesAreTheOnesKnockwatchReads() throws IOException {
    Set<String> read = namesTheAppReads();
    assertThat(read).contains("KNOCKWATCH_BOOTSTRAP_SERVERS", "KNOCKWATCH_METRICS_PORT", "KNOCKWATCH_API_TOKEN",
        "KNOCKWATCH_SLACK_WEBHOOK");
    List<String> unknown = new ArrayList<>();
    for (String service : knockwatchServices()) {
      for (String name : env(service).keySet()) {
        if (!read.contains(name)) {
          unknown.add(service + ": " + name);
        }
      }
    }
    assertThat(unknown).isEmpty();
  }

  @Test
  void noSecretIsWrittenInTheFile() {
    Pattern secretName = Pattern.compile(".*(TOKEN|KEY|PASSWORD|SECRET|WEBHOOK).*");
    services.forEach((name, s) -> env(name).forEach((k, v) -> {
      if (secretName.matcher(k).matches()) {
        // a reference to the environment: no default, an empty one, or required with a message
        assertThat(String.valueOf(v)).as(name + " " + k).matches("\\$\\{[A-Z0-9_]+(:-|:\\?[^}]*)?\\}");
      }
    }));
    // a required secret says what it is for when missing
    assertThat(String.valueOf(env("streams").get("KNOCKWATCH_API_TOKEN"))).startsWith("${KNOCKWATCH_API_TOKEN:?set ");
  }

  @Test
  @SuppressWarnings("unchecked")
  void prometheusScrapesThePortEachStageServesMetricsOn() throws IOException {
    Map<String, Object> prom = new Yaml().load(Files.readString(REPO.resolve("dashboards/prometheus/prometheus.yml")));
    Set<String> targets = new TreeSet<>();
    for (Map<String, Object> job : (List<Map<String, Object>>) prom.get("scrape_configs")) {
      for (Map<String, Object> sc : (List<Map<String, Object>>) job.get("static_configs")) {
        targets.addAll((List<String>) sc.get("targets"));
      }
    }
    for (String stage : List.of("ingest", "streams", "notify")) {
      assertThat(env(stage).get("KNOCKWATCH_METRICS_BIND")).isEqualTo("0.0.0.0");
      assertThat(targets).contains(stage + ":" + env(stage).get("KNOCKWATCH_METRICS_PORT"));
    }
  }

  /** Issue 26: three KRaft nodes, knockwatch's topics replicated three times, a write taken once two have it. */
  @Test
  @SuppressWarnings("unchecked")
  void kafkaIsAThreeNodeClusterThatReplicatesEveryTopicThreeTimes() {
    Set<Object> clusterIds = new HashSet<>();
    Set<Object> nodeIds = new TreeSet<>();
    for (String node : KAFKA_NODES) {
      Map<String, Object> e = env(node);
      clusterIds.add(e.get("CLUSTER_ID"));
      nodeIds.add(e.get("KAFKA_NODE_ID"));
      assertThat(e).as(node)
          .containsEntry("KAFKA_PROCESS_ROLES", "broker,controller")
          .containsEntry("KAFKA_CONTROLLER_QUORUM_VOTERS", "1@kafka-1:9093,2@kafka-2:9093,3@kafka-3:9093")
          .containsEntry("KAFKA_ADVERTISED_LISTENERS", "PLAINTEXT://" + node + ":9092")
          .containsEntry("KAFKA_DEFAULT_REPLICATION_FACTOR", "3")
          .containsEntry("KAFKA_MIN_INSYNC_REPLICAS", "2")
          .containsEntry("KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR", "3")
          .containsEntry("KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR", "3")
          .containsEntry("KAFKA_TRANSACTION_STATE_LOG_MIN_ISR", "2");
      assertThat(env(node).get("KAFKA_NODE_ID")).isEqualTo(node.substring("kafka-".length()));
      assertThat(String.join(" ", (List<String>) services.get(node).get("volumes"))).contains(node + "-data:");
    }
    assertThat(clusterIds).as("one cluster").hasSize(1).doesNotContainNull();
    assertThat(nodeIds).containsExactly("1", "2", "3");
    assertThat(env("topics")).containsEntry("KNOCKWATCH_REPLICATION_FACTOR", "3");
    assertThat((Map<String, Object>) services.get("topics").get("depends_on")).containsOnlyKeys(KAFKA_NODES);
    for (String stage : knockwatchServices()) {
      assertThat(env(stage)).as(stage).containsEntry("KNOCKWATCH_BOOTSTRAP_SERVERS", "kafka-1:9092,kafka-2:9092,kafka-3:9092");
    }
  }

  /** Issue 26: the pipeline's health alerts reach someone: Prometheus sends them to the stack's Alertmanager. */
  @Test
  @SuppressWarnings("unchecked")
  void prometheusSendsItsAlertsToAlertmanagerWhoseReceiverComesFromTheEnvironment() throws IOException {
    Map<String, Object> prom = new Yaml().load(Files.readString(REPO.resolve("dashboards/prometheus/prometheus.yml")));
    Map<String, Object> alerting = (Map<String, Object>) prom.get("alerting");
    assertThat(alerting).as("prometheus.yml has an alerting: block").isNotNull();
    List<String> targets = ((List<Map<String, Object>>) alerting.get("alertmanagers")).stream()
        .flatMap(a -> ((List<Map<String, Object>>) a.get("static_configs")).stream())
        .flatMap(c -> ((List<String>) c.get("targets")).stream()).toList();
    assertThat(targets).containsExactly("alertmanager:9093");
    Map<String, Object> am = services.get("alertmanager");
    assertThat(String.join(" ", (List<String>) am.get("volumes"))).contains("./dashboards/alertmanager:/etc/alertmanager:ro");
    assertThat((List<String>) am.get("secrets")).containsExactly("pipeline_slack_webhook");
    Map<String, Object> secret = (Map<String, Object>) ((Map<String, Object>) compose.get("secrets")).get("pipeline_slack_webhook");
    assertThat(secret).containsExactly(Map.entry("environment", "KNOCKWATCH_PIPELINE_SLACK_WEBHOOK"));
    assertThat(Files.readString(REPO.resolve("dashboards/alertmanager/alertmanager.yml")))
        .contains("api_url_file: /run/secrets/pipeline_slack_webhook");
  }
}
