package dev.knockwatch.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.TopicPartitionInfo;
import org.yaml.snakeyaml.Yaml;

/**
 * The Kafka cluster docker-compose.yml declares, run here: one process of the project's own jar
 * ({@code kafka.Kafka}, combined broker and controller) per {@code kafka-N} service, on 127.0.0.1.
 * Each node's settings are compose's: every {@code KAFKA_*} of the service's environment
 * ({@code KAFKA_MIN_INSYNC_REPLICAS} is {@code min.insync.replicas}), its {@code CLUSTER_ID}, with
 * only the addresses and the log directory made local. The harness reads compose's file, so the
 * cluster the tests fault is the one compose starts, and the two cannot drift.
 */
final class KafkaCluster implements AutoCloseable {

  static final Path COMPOSE = Launched.REPO.resolve("docker-compose.yml");
  private static final Pattern LISTENER = Pattern.compile("([A-Z_]+)://[^:,]*:(\\d+)");
  private static final Pattern VOTER = Pattern.compile("(\\d+)@([^:,]+):(\\d+)");

  /** One node: its id, its client and controller ports, its files, its process while it runs. */
  static final class Node {
    final int id;
    final int port;
    final int controllerPort;
    final Path dir;
    final Path properties;
    Process process;
    /** Whether its log directory is a tmpfs of its own, unmounted when the cluster closes. */
    boolean tmpfs;

    Node(int id, int port, int controllerPort, Path dir) {
      this.id = id;
      this.port = port;
      this.controllerPort = controllerPort;
      this.dir = dir;
      this.properties = dir.resolve("server.properties");
    }

    Path log() {
      return dir.resolve("node.log");
    }

    long pid() {
      return process.pid();
    }
  }

  private final Map<Integer, Node> nodes = new TreeMap<>();

  private KafkaCluster() {}

  /** What compose declares: each {@code kafka-N} service's environment, merged with the anchors it includes, by service. */
  @SuppressWarnings("unchecked")
  static Map<String, Map<String, String>> composeNodes() throws IOException {
    Map<String, Object> compose = new Yaml().load(Files.readString(COMPOSE));
    Map<String, Map<String, Object>> services = (Map<String, Map<String, Object>>) compose.get("services");
    Map<String, Map<String, String>> out = new TreeMap<>();
    services.forEach((name, service) -> {
      if (name.matches("kafka-\\d+")) {
        Map<String, String> env = new LinkedHashMap<>();
        ((Map<String, Object>) service.get("environment")).forEach((k, v) -> env.put(k, String.valueOf(v)));
        out.put(name, env);
      }
    });
    return out;
  }

  /** The image compose runs its nodes from ({@code apache/kafka:4.4.0}). */
  @SuppressWarnings("unchecked")
  static String composeImage() throws IOException {
    Map<String, Object> compose = new Yaml().load(Files.readString(COMPOSE));
    return String.valueOf(((Map<String, Object>) ((Map<String, Object>) compose.get("services")).get("kafka-1")).get("image"));
  }

  /**
   * A node's server.properties from its service's environment: each {@code KAFKA_*} as Kafka's
   * image reads it, the addresses on 127.0.0.1 at the ports given, the data in {@code dataDir}.
   */
  static Map<String, String> settings(Map<String, String> env, Map<Integer, int[]> ports, Path dataDir) {
    Map<String, String> p = new TreeMap<>();
    env.forEach((k, v) -> {
      if (k.startsWith("KAFKA_")) {
        p.put(k.substring("KAFKA_".length()).toLowerCase(java.util.Locale.ROOT).replace('_', '.'), v);
      }
    });
    int id = Integer.parseInt(p.get("node.id"));
    int[] own = ports.get(id);
    p.put("listeners", local(p.get("listeners"), own));
    p.put("advertised.listeners", local(p.get("advertised.listeners"), own));
    Matcher voters = VOTER.matcher(p.get("controller.quorum.voters"));
    StringBuilder local = new StringBuilder();
    while (voters.find()) {
      int voter = Integer.parseInt(voters.group(1));
      voters.appendReplacement(local, voter + "@127.0.0.1:" + ports.get(voter)[1]);
    }
    voters.appendTail(local);
    p.put("controller.quorum.voters", local.toString());
    p.put("log.dirs", dataDir.toString());
    return p;
  }

  /** Each listener of {@code listeners} on 127.0.0.1: the controller's at {@code own[1]}, every other at {@code own[0]}. */
  private static String local(String listeners, int[] own) {
    Matcher m = LISTENER.matcher(listeners);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      m.appendReplacement(out, m.group(1) + "://127.0.0.1:" + (m.group(1).equals("CONTROLLER") ? own[1] : own[0]));
    }
    m.appendTail(out);
    return out.toString();
  }

  /** Formats each node's log directory with compose's cluster id and starts the nodes; returns once all are brokers of the cluster. */
  static KafkaCluster start(Path dir) throws Exception {
    return start(dir, null);
  }

  /**
   * As {@link #start(Path)}; with {@code tmpfsSize} (as mount takes it: {@code 1g}) each node's log
   * directory is a tmpfs of that size of its own, a disk that can be filled ({@link #fill}).
   */
  static KafkaCluster start(Path dir, String tmpfsSize) throws Exception {
    KafkaCluster cluster = new KafkaCluster();
    Map<String, Map<String, String>> services = composeNodes();
    Map<Integer, int[]> ports = new TreeMap<>();
    for (Map<String, String> env : services.values()) {
      ports.put(Integer.parseInt(env.get("KAFKA_NODE_ID")), new int[] {Launched.freePort(), Launched.freePort()});
    }
    for (Map<String, String> env : services.values()) {
      int id = Integer.parseInt(env.get("KAFKA_NODE_ID"));
      Node node = new Node(id, ports.get(id)[0], ports.get(id)[1], Files.createDirectories(dir.resolve("node-" + id)));
      Map<String, String> p = settings(env, ports, node.dir.resolve("data"));
      if (tmpfsSize != null) {
        Files.createDirectories(node.dir.resolve("data"));
        run("mount", "-t", "tmpfs", "-o", "size=" + tmpfsSize, "tmpfs", node.dir.resolve("data").toString());
        node.tmpfs = true;
      }
      Files.writeString(node.properties, p.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
          .collect(Collectors.joining("\n", "", "\n")));
      Process format = new ProcessBuilder(java(), "-cp", jar(), "kafka.tools.StorageTool", "format", "-t",
          env.get("CLUSTER_ID"), "-c", node.properties.toString()).redirectErrorStream(true)
          .redirectOutput(node.dir.resolve("format.log").toFile()).start();
      if (!format.waitFor(120, TimeUnit.SECONDS) || format.exitValue() != 0) {
        throw new AssertionError("formatting node " + id + " failed:\n" + Files.readString(node.dir.resolve("format.log")));
      }
      cluster.nodes.put(id, node);
    }
    try {
      for (Node n : cluster.nodes.values()) {
        cluster.launch(n);
      }
      cluster.awaitBrokers(cluster.nodes.size(), Duration.ofMinutes(3));
    } catch (Throwable t) {
      cluster.close();
      throw t;
    }
    return cluster;
  }

  private static String java() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }

  private static String jar() {
    return Launched.REPO.resolve(Launched.JAR).toString();
  }

  private void launch(Node n) throws IOException {
    n.process = new ProcessBuilder(java(), "-Xmx384m", "-XX:+UseSerialGC", "-cp", jar(), "kafka.Kafka",
        n.properties.toString()).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(n.log().toFile())).start();
  }

  Node node(int id) {
    return nodes.get(id);
  }

  List<Node> nodes() {
    return List.copyOf(nodes.values());
  }

  String bootstrapServers() {
    return nodes.values().stream().map(n -> "127.0.0.1:" + n.port).collect(Collectors.joining(","));
  }

  Admin admin() {
    return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers(),
        AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 30_000));
  }

  /** SIGKILL: the node dies with nothing flushed, as a machine lost. */
  void kill(int id) throws InterruptedException {
    Node n = nodes.get(id);
    n.process.destroyForcibly();
    n.process.waitFor(30, TimeUnit.SECONDS);
  }

  /** SIGTERM, and waits for the node to exit: a controlled shutdown (its leaderships moved to the others first). */
  void stop(int id) throws InterruptedException {
    Node n = nodes.get(id);
    n.process.destroy();
    if (!n.process.waitFor(2, TimeUnit.MINUTES)) {
      throw new AssertionError("node " + id + " did not stop within 2 min of SIGTERM");
    }
  }

  /** Waits until every partition of {@code topics} has all its replicas in sync. */
  void awaitInSync(Admin admin, List<String> topics, Duration within) throws Exception {
    Instant deadline = Instant.now().plus(within);
    List<String> lacking = List.of("(not asked yet)");
    while (Instant.now().isBefore(deadline)) {
      try {
        lacking = underReplicated(admin, topics);
        if (lacking.isEmpty()) {
          return;
        }
      } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException notAnswered) {
        lacking = List.of("(no answer: " + notAnswered.getMessage() + ")");
      }
      Thread.sleep(250);
    }
    throw new AssertionError("partitions not in sync within " + within + ": " + lacking);
  }

  /** Starts a node killed or stopped before, from its own data. */
  void restart(int id) throws IOException {
    launch(nodes.get(id));
  }

  /** Fills node {@code id}'s log directory (a tmpfs: {@link #start(Path, String)}) to its last byte; returns the bytes written. */
  long fill(int id) throws IOException {
    Node n = nodes.get(id);
    if (!n.tmpfs) {
      throw new IllegalStateException("node " + id + "'s log directory is no tmpfs of its own");
    }
    long written = 0;
    byte[] block = new byte[1 << 20];
    try (java.io.OutputStream out = Files.newOutputStream(filler(n))) {
      for (int size = block.length; size > 0; size /= 16) {
        try {
          while (true) {
            out.write(block, 0, size);
            out.flush();
            written += size;
          }
        } catch (IOException full) {
          // no room for a block of this size: try smaller ones, down to a byte
        }
      }
    }
    return written;
  }

  /** Gives node {@code id}'s log directory its room back: the file {@link #fill} wrote is deleted. */
  void makeRoom(int id) throws IOException {
    Files.deleteIfExists(filler(nodes.get(id)));
  }

  private static Path filler(Node n) {
    return n.dir.resolve("data").resolve("filler.bin");
  }

  private static void run(String... command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new AssertionError(String.join(" ", command) + " failed: " + out);
    }
  }

  /** SIGSTOP or SIGCONT: a node that hangs (a zombie the controller fences), then goes on. */
  void signal(int id, String signal) throws Exception {
    Process kill = new ProcessBuilder("kill", "-" + signal, String.valueOf(nodes.get(id).pid())).inheritIO().start();
    if (kill.waitFor() != 0) {
      throw new AssertionError("kill -" + signal + " " + nodes.get(id).pid() + " failed");
    }
  }

  /** Waits until the cluster has {@code brokers} brokers registered and unfenced. */
  void awaitBrokers(int brokers, Duration within) throws Exception {
    Instant deadline = Instant.now().plus(within);
    try (Admin admin = admin()) {
      while (Instant.now().isBefore(deadline)) {
        try {
          if (admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).size() >= brokers) {
            return;
          }
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException notYet) {
          // a node still starting
        }
        for (Node n : nodes.values()) {
          if (n.process != null && !n.process.isAlive() && n.process.exitValue() != 137 && n.process.exitValue() != 143) {
            throw new AssertionError("node " + n.id + " exited " + n.process.exitValue() + ":\n"
                + Launched.tail(Files.readString(n.log()), 40));
          }
        }
        Thread.sleep(250);
      }
    }
    throw new AssertionError("the cluster did not have " + brokers + " brokers within " + within);
  }

  /** The leader of each partition of {@code topic} (-1: none). */
  Map<Integer, Integer> leaders(Admin admin, String topic) throws Exception {
    TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic);
    Map<Integer, Integer> out = new TreeMap<>();
    for (TopicPartitionInfo p : d.partitions()) {
      out.put(p.partition(), p.leader() == null ? -1 : p.leader().id());
    }
    return out;
  }

  /** The node that leads the most partitions of {@code topic}. */
  int leaderOfMost(Admin admin, String topic) throws Exception {
    Map<Integer, Long> led = leaders(admin, topic).values().stream()
        .collect(Collectors.groupingBy(l -> l, TreeMap::new, Collectors.counting()));
    return led.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey();
  }

  /** The node leading the controller quorum (the active controller). */
  int quorumLeader(Admin admin) throws Exception {
    return admin.describeMetadataQuorum().quorumInfo().get(10, TimeUnit.SECONDS).leaderId();
  }

  /** The partitions of {@code topics} whose in-sync replicas are fewer than their replicas. */
  List<String> underReplicated(Admin admin, List<String> topics) throws Exception {
    List<String> out = new ArrayList<>();
    for (TopicDescription d : admin.describeTopics(topics).allTopicNames().get(30, TimeUnit.SECONDS).values()) {
      for (TopicPartitionInfo p : d.partitions()) {
        if (p.isr().size() < p.replicas().size()) {
          out.add(d.name() + "-" + p.partition());
        }
      }
    }
    return out;
  }

  @Override
  public void close() {
    for (Node n : nodes.values()) {
      if (n.process != null && n.process.isAlive()) {
        n.process.destroyForcibly(); // SIGKILL ends a stopped node too
      }
    }
    for (Node n : nodes.values()) {
      if (n.process != null) {
        try {
          n.process.waitFor(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      if (n.tmpfs) {
        try {
          run("umount", n.dir.resolve("data").toString());
        } catch (Exception e) {
          System.err.println("KafkaCluster: " + e.getMessage());
        }
      }
    }
  }
}
