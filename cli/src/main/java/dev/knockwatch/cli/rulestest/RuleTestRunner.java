package dev.knockwatch.cli.rulestest;

import dev.knockwatch.ingest.LogLayout;
import dev.knockwatch.cli.rulestest.RuleTestFile.AlertPattern;
import dev.knockwatch.cli.rulestest.RuleTestFile.Case;
import dev.knockwatch.cli.rulestest.RuleTestFile.Input;
import dev.knockwatch.cli.replay.TimeOrderedSink;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.RejectedLine;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.EventSink;
import dev.knockwatch.ingest.IngestAgent;
import dev.knockwatch.streams.DetectionTopology;
import dev.knockwatch.streams.lifecycle.AlertLifecycleProcessor;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.rules.Rule;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TestInputTopic;
import org.apache.kafka.streams.TestOutputTopic;
import org.apache.kafka.streams.TopologyTestDriver;

/**
 * Runs one test of a rules test file through the real parts, as {@code replay} does but with no
 * broker: its files are laid out as a sandbox host writes them and read by the ingest agent's
 * parsers; the events are put in time order as replay's {@link TimeOrderedSink} does (a line with
 * no time of its own takes the nearest timed refusal of its command, else its file's {@code at})
 * and go through the detection topology on a TopologyTestDriver, the alert lifecycle on event
 * time; then time moves past every rule's {@code resolveAfter}, so alerts resolve as they would.
 */
public final class RuleTestRunner {

  /** What one test came to: every alert raised, the patterns that failed, and the lines ingest refused. */
  public record Outcome(Case test, List<Alert> alerts, List<AlertPattern> missing, List<Failure> unwanted,
      List<RejectedLine> rejected) {
    public boolean passed() {
      return missing.isEmpty() && unwanted.isEmpty();
    }
  }

  /** An {@code absent} pattern and the alert that matched it anyway. */
  public record Failure(AlertPattern pattern, Alert alert) {}

  private RuleTestRunner() {}

  public static Outcome run(Policy policy, Case test, Path work) throws IOException {
    Path logs = Files.createDirectories(work.resolve("logs"));
    for (Input in : test.inputs()) {
      Path f = logs.resolve(in.file());
      Files.createDirectories(f.getParent());
      Files.writeString(f, String.join("\n", in.lines()) + "\n", StandardCharsets.UTF_8);
      Files.setLastModifiedTime(f, FileTime.from(in.at()));
    }
    Collected read = new Collected();
    TimeOrderedSink ordered = new TimeOrderedSink(read);
    IngestAgent agent = LogLayout.forLogDirectory(logs, p -> true, null, ordered, "rules-test", Duration.ZERO).wholeFiles()
        .untimedFromFiles().maxAhead(Duration.ofDays(365L * 1000));
    try {
      while (agent.pollOnce() > 0) {
        // to the end of every file
      }
      ordered.drain();
    } catch (EventSink.PublishException e) {
      throw new IllegalStateException("the test's own sink refused an event", e); // it never does
    }
    List<ViolationEvent> events = read.events;
    List<Alert> alerts = detect(policy, events, work.resolve("state"));

    List<AlertPattern> missing = test.expect().stream().filter(p -> alerts.stream().noneMatch(p::matches)).toList();
    List<Failure> unwanted = new ArrayList<>();
    for (AlertPattern p : test.absent()) {
      alerts.stream().filter(p::matches).findFirst().ifPresent(a -> unwanted.add(new Failure(p, a)));
    }
    return new Outcome(test, alerts, missing, unwanted, List.copyOf(read.rejected));
  }

  /** Every alert record the topology writes for these events, and for time moved past every resolveAfter after them. */
  public static List<Alert> detect(Policy policy, List<ViolationEvent> events, Path state) {
    Properties p = DetectionTopology.streamsConfig("knockwatch-rules-test", "unused:9092", state, Map.of());
    p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0L);
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.AT_LEAST_ONCE);
    try (TopologyTestDriver driver = new TopologyTestDriver(
        DetectionTopology.buildTopology(policy, AlertLifecycleProcessor.Clock.STREAM), p)) {
      TestInputTopic<String, ViolationEvent> in = driver.createInputTopic(Topics.VIOLATIONS.name(),
          new StringSerializer(), Json.eventSerde().serializer());
      TestOutputTopic<String, Alert> out = driver.createOutputTopic(Topics.ALERTS.name(), new StringDeserializer(),
          Json.serde(Alert.class).deserializer());
      Instant last = Instant.EPOCH;
      for (ViolationEvent e : events) {
        in.pipeInput(e.key(), e, e.observedAt());
        last = e.observedAt().isAfter(last) ? e.observedAt() : last;
      }
      // the end of input: an empty record past every idle limit, as replay's
      Duration longest = policy.rules().stream().map(Rule::resolveAfter).max(Comparator.naturalOrder())
          .orElse(Duration.ZERO);
      in.pipeInput("end-of-test", null, last.plus(longest).plusSeconds(60));
      return out.readValuesToList();
    }
  }

  /** What ingest read, in the order the time-ordering sink hands it on, and the lines it refused. */
  private static final class Collected implements EventSink {
    final List<ViolationEvent> events = new ArrayList<>();
    final List<RejectedLine> rejected = new ArrayList<>();

    @Override
    public void publish(ViolationEvent event) {
      events.add(event);
    }

    @Override
    public void reject(RejectedLine line) {
      rejected.add(line);
    }

    @Override
    public void flush() {
      // nothing is held
    }

    @Override
    public void close() {
      // nothing to release
    }
  }
}
