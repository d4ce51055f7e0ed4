package dev.knockwatch.broker;

import dev.knockwatch.events.Topics;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import kafka.tools.StorageTool;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A single-node KRaft Kafka broker in this JVM, from Apache Kafka's own artifacts: the storage is
 * formatted with {@link StorageTool} (once; kept between runs), then a {@link KafkaRaftServer}
 * acting as broker and controller is started on 127.0.0.1.
 */
public final class EmbeddedKafkaBroker implements AutoCloseable {

  public static final int DEFAULT_PORT = 9092;
  /** The marker Kafka leaves in its log directory after a clean shutdown, and removes at start. */
  static final String CLEAN_SHUTDOWN = ".kafka_cleanshutdown";
  private static final Logger log = LoggerFactory.getLogger(EmbeddedKafkaBroker.class);

  private final Path dataDir;
  private final int port;
  private final int controllerPort;
  private final boolean portWasTaken;
  private final SecuredListener secured;
  private KafkaRaftServer server;

  private EmbeddedKafkaBroker(Path dataDir, int port, int controllerPort, boolean portWasTaken,
      SecuredListener secured) {
    this.dataDir = dataDir;
    this.port = port;
    this.controllerPort = controllerPort;
    this.portWasTaken = portWasTaken;
    this.secured = secured;
  }

  /**
   * Formats {@code dataDir} if it holds no broker yet, starts the broker, and waits until it
   * answers. {@code preferredPort} 0 means any free port; a taken preferred port falls back to a
   * free one ({@link #portWasTaken()} tells).
   */
  public static EmbeddedKafkaBroker start(Path dataDir, int preferredPort) {
    boolean taken = preferredPort != 0 && !isFree(preferredPort);
    int port;
    int controllerPort;
    if (preferredPort == 0 || taken) {
      int[] ports = freePorts(2, 0);
      port = ports[0];
      controllerPort = ports[1];
    } else {
      port = preferredPort;
      controllerPort = freePorts(1, preferredPort)[0];
    }
    EmbeddedKafkaBroker broker = new EmbeddedKafkaBroker(dataDir, port, controllerPort, taken, null);
    broker.startServer();
    return broker;
  }

  /**
   * A broker as {@link #start} makes it, with a second listener on a free port as a company's
   * secured cluster has it, for tests: SASL_SSL with the certificate of {@code keystore} (PKCS12,
   * {@code keystorePassword}), SCRAM-SHA-512 logins ({@link #addScramUser}), and Kafka's
   * {@code StandardAuthorizer}, which allows nothing that no ACL allows. The plaintext listener
   * stays for the broker itself and a test's own setup: its (anonymous) clients are super users.
   */
  public static EmbeddedKafkaBroker startSecured(Path dataDir, Path keystore, String keystorePassword) {
    int[] ports = freePorts(3, 0);
    EmbeddedKafkaBroker broker = new EmbeddedKafkaBroker(dataDir, ports[0], ports[1], false,
        new SecuredListener(ports[2], keystore.toAbsolutePath(), keystorePassword));
    broker.startServer();
    return broker;
  }

  /** The SASL_SSL listener of {@link #startSecured}. */
  private record SecuredListener(int port, Path keystore, String keystorePassword) {}

  /** The secured listener of {@link #startSecured}. */
  public String securedBootstrapServers() {
    if (secured == null) {
      throw new IllegalStateException("this broker has no secured listener");
    }
    return "127.0.0.1:" + secured.port();
  }

  /** Creates (or changes) a SCRAM-SHA-512 login on the secured listener, through the plaintext one. */
  public void addScramUser(String user, String password) {
    try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers()))) {
      admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion(user,
          new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192), password))).all().get(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while adding a SCRAM user", e);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("cannot add SCRAM user " + user + ": " + e.getMessage(), e);
    }
  }

  /** Deletes everything under {@code dataDir}: what {@code up --fresh} does before start. */
  public static void wipe(Path dataDir) {
    if (!Files.exists(dataDir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dataDir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot wipe " + dataDir, e);
    }
  }

  public String bootstrapServers() {
    return "127.0.0.1:" + port;
  }

  public int port() {
    return port;
  }

  /** True when the preferred port was in use and another was picked. */
  public boolean portWasTaken() {
    return portWasTaken;
  }

  public Path dataDir() {
    return dataDir;
  }

  private void startServer() {
    try {
      Files.createDirectories(dataDir);
      Path logDir = dataDir.resolve("data");
      Properties props = serverProperties(logDir);
      if (!Files.exists(logDir.resolve("meta.properties"))) {
        format(props);
        log.info("starting the embedded Kafka broker (new data in {})", dataDir);
      } else if (!Files.exists(logDir.resolve(CLEAN_SHUTDOWN))) {
        log.info("starting the embedded Kafka broker (data in {}); it was not stopped cleanly, so it first"
            + " recovers its logs", dataDir);
      } else {
        log.info("starting the embedded Kafka broker (data in {})", dataDir);
      }
      long started = System.nanoTime();
      server = new KafkaRaftServer(new KafkaConfig(props, false), Time.SYSTEM);
      server.startup();
      TopicCreator.awaitReady(bootstrapServers(), Duration.ofSeconds(60));
      log.info("embedded Kafka broker up on {} after {} ms", bootstrapServers(), (System.nanoTime() - started) / 1_000_000);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot prepare the broker's data directory " + dataDir, e);
    }
  }

  private Properties serverProperties(Path logDir) {
    Properties p = new Properties();
    p.put("process.roles", "broker,controller");
    p.put("node.id", "1");
    p.put("controller.quorum.voters", "1@127.0.0.1:" + controllerPort);
    p.put("listeners", "PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort
        + (secured == null ? "" : ",SECURED://127.0.0.1:" + secured.port()));
    p.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + port
        + (secured == null ? "" : ",SECURED://127.0.0.1:" + secured.port()));
    p.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
        + (secured == null ? "" : ",SECURED:SASL_SSL"));
    if (secured != null) {
      p.put("listener.name.secured.sasl.enabled.mechanisms", "SCRAM-SHA-512");
      p.put("listener.name.secured.scram-sha-512.sasl.jaas.config",
          "org.apache.kafka.common.security.scram.ScramLoginModule required;");
      p.put("listener.name.secured.ssl.keystore.type", "PKCS12");
      p.put("listener.name.secured.ssl.keystore.location", secured.keystore().toString());
      p.put("listener.name.secured.ssl.keystore.password", secured.keystorePassword());
      p.put("authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer");
      p.put("allow.everyone.if.no.acl.found", "false");
      // the plaintext and controller listeners: the broker itself, and a test's own setup
      p.put("super.users", "User:ANONYMOUS");
    }
    p.put("controller.listener.names", "CONTROLLER");
    p.put("inter.broker.listener.name", "PLAINTEXT");
    p.put("log.dirs", logDir.toString());
    p.put("num.partitions", "1");
    p.put("offsets.topic.replication.factor", "1");
    p.put("offsets.topic.num.partitions", "3");
    p.put("transaction.state.log.replication.factor", "1");
    p.put("transaction.state.log.min.isr", "1");
    p.put("transaction.state.log.num.partitions", "3");
    p.put("share.coordinator.state.topic.replication.factor", "1");
    p.put("share.coordinator.state.topic.min.isr", "1");
    p.put("min.insync.replicas", "1");
    p.put("default.replication.factor", "1");
    p.put("group.initial.rebalance.delay.ms", "0");
    p.put("auto.create.topics.enable", "false");
    p.put("log.flush.interval.messages", "10000");
    // After a kill -9 the restarted broker registers with its own controller, which holds the dead
    // incarnation's session for broker.session.timeout.ms (9 s by default) before it takes the new
    // registration: the broker and its controller share this process, so a short session loses
    // nothing. Heartbeats keep a third of it: each is a request to the controller, a third of an idle
    // process's requests at 750 ms (docs/PERFORMANCE.md, "up idle").
    p.put("broker.session.timeout.ms", "4500");
    p.put("broker.heartbeat.interval.ms", "1500");
    // A transaction left open by a killed Streams producer holds read_committed readers (notify,
    // the timeline) until the broker aborts it: at its timeout, found by a scan every 10 s by
    // default. A scan a second finds it at its timeout.
    p.put("transaction.abort.timed.out.transaction.cleanup.interval.ms", "1000");
    // The log cleaner allocates its whole dedupe buffer on the heap at start (128 MB by default):
    // half of a 256 MB heap the broker shares with the process. 16 MB holds some 600,000 keys
    // per cleaning pass, far more than knockwatch's compacted topics hold here.
    p.put("log.cleaner.dedupe.buffer.size", String.valueOf(16 * 1024 * 1024));
    // Idle, the broker was a third of up's CPU (docs/PERFORMANCE.md, "up idle"). Each request handler
    // and network thread wakes every 300 ms to look at its queue, broker and controller each having
    // their own (8 handlers, 3 network threads by default, for many cores and clients); one process's
    // clients on a laptop need one of each (`bench ingest` published 311k lines/s through them, as
    // many as through two). The controller appends a no-op record to the metadata log
    // every 500 ms by default, for brokers to see it alive: its only broker shares this process, so
    // none. Each partition's high watermark is written to disk every 5 s by default; after a kill -9
    // the sole replica takes its log's end as the mark anyway, so twice a minute.
    p.put("num.io.threads", "1");
    p.put("num.network.threads", "1");
    p.put("background.threads", "2");
    p.put("group.coordinator.threads", "1");
    p.put("share.coordinator.threads", "1");
    p.put("metadata.max.idle.interval.ms", "0");
    p.put("replica.high.watermark.checkpoint.interval.ms", "30000");
    return p;
  }

  private void format(Properties props) throws IOException {
    Path config = dataDir.resolve("server.properties");
    try (Writer w = Files.newBufferedWriter(config, StandardCharsets.UTF_8)) {
      props.store(w, "written by knockwatch for the storage format step");
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    int rc = StorageTool.execute(new String[] {
        "format", "-t", Uuid.randomUuid().toString(), "-c", config.toString()},
        new PrintStream(out, true, StandardCharsets.UTF_8));
    if (rc != 0) {
      throw new IllegalStateException("formatting Kafka storage in " + dataDir + " failed: "
          + out.toString(StandardCharsets.UTF_8).trim());
    }
  }

  private static boolean isFree(int port) {
    try (ServerSocket s = new ServerSocket()) {
      s.setReuseAddress(true);
      s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /**
   * {@code n} free ports on 127.0.0.1, all different and none of them {@code other}: each one's
   * socket stays open until all are found. Found one at a time, closing each, the kernel can hand
   * out the same port twice (seen once: "two listeners on the same port").
   */
  static int[] freePorts(int n, int other) {
    List<ServerSocket> held = new java.util.ArrayList<>();
    try {
      int[] ports = new int[n];
      for (int found = 0; found < n; ) {
        ServerSocket s = new ServerSocket(0, 0, InetAddress.getLoopbackAddress());
        held.add(s);
        if (s.getLocalPort() != other) {
          ports[found++] = s.getLocalPort();
        }
      }
      return ports;
    } catch (IOException e) {
      throw new UncheckedIOException("no free port on 127.0.0.1", e);
    } finally {
      for (ServerSocket s : held) {
        try {
          s.close();
        } catch (IOException e) {
          // closing a listening socket nobody connected to
        }
      }
    }
  }

  /** Creates every topic of the {@link Topics} registry that is missing. */
  public void createTopics() {
    TopicCreator.createMissing(bootstrapServers(), Map.of());
  }

  @Override
  public void close() {
    if (server != null) {
      server.shutdown();
      server.awaitShutdown();
      server = null;
      log.info("embedded Kafka broker on port {} stopped", port);
    }
  }
}
