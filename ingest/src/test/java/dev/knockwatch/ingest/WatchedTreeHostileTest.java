package dev.knockwatch.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.testkit.EmbeddedKafkaExtension;
import dev.knockwatch.testkit.TopicReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The running agent watches the tree with the kernel (inotify) and, caught up, waits on it. If an
 * agent can write the tree (a sandbox whose {@code allowWrite} lets it in, docs/TRUST.md) or its
 * names reach it: while it makes and removes directories with hostile names,
 * replaces a directory by a file, nests deep, loops a symbolic link and appends hostile lines as
 * fast as it can, the refusals of other commands (in a directory there from the start, in one
 * made during the churn, and deep down) are still published, nothing escapes the agent's thread,
 * and it stops when told.
 */
@Tag("integration")
@ExtendWith(EmbeddedKafkaExtension.class)
class WatchedTreeHostileTest {

  @TempDir Path dir;

  @Test
  void aChurningTreeNeitherStopsTheAgentNorHidesAnotherCommandsRefusal(EmbeddedKafkaBroker broker) throws Exception {
    String prefix = "watched-" + System.nanoTime();
    Path logs = dir.resolve("logs");
    Files.createDirectories(logs.resolve(prefix + "-quiet"));
    Hostile h = new Hostile(7);
    List<String> controls = new ArrayList<>();
    AtomicReference<Throwable> escaped = new AtomicReference<>();
    try (KafkaEventSink sink = KafkaEventSink.create(broker.bootstrapServers(), Map.of());
        IngestAgent agent = LogLayout.forLogDirectory(logs, p -> true, dir.resolve("checkpoints.json"), sink, "host-a",
            Duration.ofMillis(50))) {
      Thread reader = new Thread(agent, "the-reader");
      reader.setUncaughtExceptionHandler((t, e) -> escaped.set(e));
      reader.start();
      Thread.sleep(500); // caught up on an empty tree: waiting on the kernel

      controls.add(control(logs.resolve(prefix + "-quiet"), 0));
      Thread churn = new Thread(() -> churn(logs, prefix, h), "churn");
      churn.start();
      Thread.sleep(300);
      controls.add(control(Files.createDirectories(logs.resolve(prefix + "-made-meanwhile")), 1));
      Path deep = logs.resolve(prefix + "-deep");
      for (int i = 0; i < 40; i++) {
        deep = deep.resolve("d" + i);
      }
      controls.add(control(Files.createDirectories(deep), 2));
      churn.join();
      // and after the churn, a refusal appended to a file read long ago, in a directory from the start
      Files.writeString(logs.resolve(prefix + "-quiet").resolve(controls.get(0) + ".violations.jsonl"),
          record(controls.get(0), "evil.test:443"), StandardOpenOption.APPEND);

      Set<String> ids = Set.copyOf(controls);
      List<ConsumerRecord<String, ViolationEvent>> seen = TopicReader.readUntil(broker, Topics.VIOLATIONS.name(),
          Json.serde(ViolationEvent.class).deserializer(), r -> ids.contains(r.value().commandId()), 4);
      assertThat(seen.stream().map(r -> r.value().commandId() + " " + r.value().host()).collect(Collectors.toSet()))
          .as("every other command's refusal").containsExactlyInAnyOrder(
              controls.get(0) + " pastebin.com", controls.get(1) + " pastebin.com", controls.get(2) + " pastebin.com",
              controls.get(0) + " evil.test");
      assertThat(reader.isAlive()).as("the reader, after the churn").isTrue();
      agent.close();
      reader.join(30_000);
      assertThat(reader.isAlive()).as("the reader stops when told").isFalse();
    }
    assertThat(escaped.get()).as("nothing escaped the reader").isNull();
  }

  /** Two seconds of an agent's worst: names, races, depth, a loop, and lines as fast as it can write. */
  private static void churn(Path logs, String prefix, Hostile h) {
    long end = System.nanoTime() + Duration.ofSeconds(2).toNanos();
    try {
      Path loop = Files.createDirectories(logs.resolve(prefix + "-loop"));
      Files.createSymbolicLink(loop.resolve("again"), loop);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    for (int i = 0; System.nanoTime() < end; i++) {
      Path d;
      try {
        d = logs.resolve(prefix + "-churn-" + (i % 20) + h.token().replace("/", "").replace("\0", ""));
      } catch (InvalidPathException e) {
        continue; // a name this filesystem cannot hold
      }
      String id = String.format("Churn%017d", i);
      try {
        Files.createDirectories(d);
        Files.writeString(d.resolve(id + ".violations.jsonl"), record(id, h.hostPort()) + h.text() + "\n");
        if (i % 3 == 0) { // removed at once: perhaps while a walk lists it
          Files.delete(d.resolve(id + ".violations.jsonl"));
          Files.delete(d);
          if (i % 6 == 0) {
            Files.writeString(d, "a file where a directory was\n");
            Files.delete(d);
          }
        }
      } catch (IOException | IllegalArgumentException e) {
        // a name too long, or taken by what is being removed: the next one
      }
    }
  }

  private static String control(Path in, int n) throws IOException {
    String id = ("WatchedControl" + n + "xxxxxxxxxxxxxxxxxxxxxx").substring(0, 22);
    Files.writeString(in.resolve(id + ".violations.jsonl"), record(id, "pastebin.com:443"), StandardCharsets.UTF_8);
    return id;
  }

  private static String record(String id, String hostPort) {
    return "{\"line\":\"deny network-outbound " + Hostile.json(hostPort).replaceAll("^\"|\"$", "")
        + " (host is not on the allow list)\",\"commandId\":\"" + id + "\",\"timestamp\":\"2026-11-29T18:45:32.887Z\"}\n";
  }
}
