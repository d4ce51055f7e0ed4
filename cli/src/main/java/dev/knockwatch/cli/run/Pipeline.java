package dev.knockwatch.cli.run;

import dev.knockwatch.ingest.LogLayout;
import dev.knockwatch.ingest.IngestAgent;
import dev.knockwatch.ingest.KafkaEventSink;
import dev.knockwatch.ingest.RawTopicIngest;
import dev.knockwatch.notify.AlertDispatcher;
import dev.knockwatch.notify.spi.Notifier;
import dev.knockwatch.notify.config.ReceiversConfig;
import dev.knockwatch.notify.pipeline.Backoff;
import dev.knockwatch.streams.StreamsApp;
import dev.knockwatch.streams.lifecycle.AlertLifecycleProcessor;
import dev.knockwatch.streams.rules.Policy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.streams.StreamsConfig;

/**
 * The three stages on one Kafka cluster, each on its own thread: ingest (tail, parse, publish),
 * streams (count, detect), notify (deliver). Closing stops ingest after its batch is published,
 * then closes streams (committing), then notify.
 */
public final class Pipeline implements AutoCloseable {

  /**
   * How long ingest waits when a poll found no new line: most of a refusal's way to its alert
   * when the agent is otherwise idle (the bench streams latency figure).
   */
  public static final Duration POLL_INTERVAL = Duration.ofMillis(50);

  /**
   * Everything the stages need; {@code varDir} holds the ingest checkpoint and the streams state;
   * {@code instanceId}, when not null, is the static group member id of detection and notify
   * (the launcher's {@code InstanceId}).
   */
  public record Settings(String bootstrapServers, Map<String, Object> clientProps, Path logsDir, Path varDir,
      Policy policy, String applicationId, String notifyGroupId, Duration pollInterval, String instanceId,
      String rawTopic, List<IngestAgent.Feed> sources) {

    public Settings(String bootstrapServers, Map<String, Object> clientProps, Path logsDir, Path varDir, Policy policy,
        String applicationId, String notifyGroupId, Duration pollInterval, String instanceId) {
      this(bootstrapServers, clientProps, logsDir, varDir, policy, applicationId, notifyGroupId, pollInterval, instanceId,
          null, List.of());
    }
  }

  /** Null with {@code rawTopic}: the raw lines come from a shipper, not from files. */
  private final KafkaEventSink sink;
  /** The agent on the logs directory, or with {@code rawTopic} the stage on a shipper's raw lines. */
  private final AutoCloseable ingest;
  private final Settings settings;
  private volatile StreamsApp streams;
  private final AlertDispatcher dispatcher;
  private final Thread ingestThread;
  private final Thread notifyThread;

  private Pipeline(Settings s, ReceiversConfig receivers, List<Notifier> notifiers) {
    settings = s;
    streams = startStreams(s.policy());
    dispatcher = new AlertDispatcher(s.bootstrapServers(), s.notifyGroupId(), s.instanceId(), s.clientProps(), receivers,
        notifiers, Backoff.DEFAULT);
    notifyThread = new Thread(dispatcher, "knockwatch-notify");
    notifyThread.start();
    Runnable stage;
    if (s.rawTopic() != null) {
      sink = null;
      RawTopicIngest raw = new RawTopicIngest(s.bootstrapServers(), s.clientProps(), s.rawTopic(),
          RawTopicIngest.DEFAULT_GROUP, RawTopicIngest.DEFAULT_GROUP + "-" + (s.instanceId() != null ? s.instanceId()
          : hostName()), s.logsDir().toAbsolutePath().normalize().toString(), java.time.Clock.systemUTC());
      ingest = raw;
      stage = raw;
    } else {
      sink = KafkaEventSink.create(s.bootstrapServers(), s.clientProps());
      // the log directory, and beside it the sources of a sources.yaml (a firewall's log, a proxy's)
      List<IngestAgent.Feed> feeds = new java.util.ArrayList<>();
      feeds.add(LogLayout.logDirectoryFeed(s.logsDir(), p -> true, s.varDir().resolve("ingest").resolve("checkpoints.json")));
      feeds.addAll(s.sources());
      IngestAgent agent = new IngestAgent(feeds, sink, hostName(), java.time.Clock.systemUTC(), s.pollInterval())
          .pacePerCommand(IngestAgent.PER_COMMAND_LINES_PER_SECOND);
      ingest = agent;
      stage = agent;
    }
    ingestThread = new Thread(stage, "knockwatch-ingest");
    ingestThread.start();
  }

  public static Pipeline start(Settings settings, ReceiversConfig receivers, List<Notifier> notifiers) {
    return new Pipeline(settings, receivers, notifiers);
  }

  private StreamsApp startStreams(Policy policy) {
    return new StreamsApp(settings.applicationId(), settings.bootstrapServers(), settings.varDir().resolve("streams"),
        policy, AlertLifecycleProcessor.Clock.WALL, member(settings.clientProps(), settings.instanceId()))
        .start(Duration.ofSeconds(120));
  }

  /**
   * A Streams app's settings with {@code instanceId} as its static member id (Streams adds each
   * thread's index), or as they are when it is null.
   */
  public static Map<String, Object> member(Map<String, Object> streamsProps, String instanceId) {
    if (instanceId == null) {
      return streamsProps;
    }
    Map<String, Object> p = new HashMap<>(streamsProps);
    p.put(StreamsConfig.mainConsumerPrefix(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG), instanceId);
    return p;
  }

  /**
   * New rules: detection closes (committing, leaving its group) and starts again with a topology
   * built from them. Ingest and notify go on; refusals meanwhile wait on the topic.
   */
  public synchronized void restartDetection(Policy policy) {
    streams.close();
    streams = startStreams(policy);
  }

  /** Why Kafka stopped detection for good (a refused login or ACL), or null. */
  public String detectionRefused() {
    return streams.refused();
  }

  /**
   * Waits until {@code stopped} (Ctrl-C, SIGTERM); a Streams app that Kafka stopped for good (a
   * login or an ACL refused while it runs) stops the command too, with that one line.
   */
  public static void awaitStop(CountDownLatch stopped, List<Supplier<String>> refusals) throws InterruptedException {
    while (!stopped.await(1, TimeUnit.SECONDS)) {
      for (Supplier<String> r : refusals) {
        String refused = r.get();
        if (refused != null) {
          throw new IllegalStateException(refused);
        }
      }
    }
  }

  /** Null while detection is RUNNING, else its state in words. */
  public String detectionNotRunning() {
    return streams.notRunning();
  }

  /** Returns once detection has processed, and committed, everything published so far. */
  public void awaitDetectionCaughtUp(Duration timeout) {
    streams.awaitCaughtUp(timeout);
  }

  public static String hostName() {
    String h = System.getenv("HOSTNAME");
    if (h == null || h.isBlank()) {
      try {
        h = java.net.InetAddress.getLocalHost().getHostName();
      } catch (java.net.UnknownHostException e) {
        h = "localhost";
      }
    }
    return h;
  }

  @Override
  public synchronized void close() {
    try {
      ingest.close();
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
    if (sink != null) {
      sink.close();
    }
    streams.close();
    dispatcher.close();
  }
}
