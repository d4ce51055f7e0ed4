package dev.knockwatch.ingest;

import dev.knockwatch.ingest.spi.Parsed;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.knockwatch.events.RejectedLine;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.ViolationEvent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class IngestAgentTest {

  static final String RECORD = "{\"line\":\"deny network-outbound example.com:443 (host is not on the allow list)\","
      + "\"encodedCommand\":\"eGhmSHl0bVhMLUw2UnNZdzJDclNqQQ==\",\"command\":\"curl -s https://example.com/?token=SECRET\","
      + "\"timestamp\":\"2026-11-29T18:45:32.887Z\"}";

  @TempDir Path logs;
  final ListSink sink = new ListSink();

  private IngestAgent agent() {
    return LogLayout.forLogDirectory(logs, p -> true, logs.resolve(".checkpoint.json"), sink, "host-a", Duration.ofMillis(10));
  }

  @Test
  void theAgentIdComesFromTheDirectoryAndEveryLineBecomesAnEvent() throws Exception {
    Files.createDirectories(logs.resolve("ci-runner-1"));
    Files.writeString(logs.resolve("ci-runner-1/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl"), RECORD + "\n" + RECORD + "\n");
    assertThat(agent().pollOnce()).isEqualTo(2);
    assertThat(sink.events).extracting(ViolationEvent::agentId).containsExactly("ci-runner-1", "ci-runner-1");
    assertThat(sink.events).extracting(ViolationEvent::eventId).doesNotHaveDuplicates();
  }

  @Test
  void aBadLineGoesToRejectedWithItsReasonAndPlaceAndWithoutItsSecrets() throws Exception {
    Files.createDirectories(logs.resolve("a"));
    Files.writeString(logs.resolve("a/c.violations.jsonl"), "{\"line\":\"deny openat /x\",\"commandId\":\"abcdefghij\","
        + "\"command\":\"curl -u me:hunter2 x\"}\n");
    agent().pollOnce();
    // no refusal is published, only the notice that one was rejected for whose it is (rule ingest-rejects)
    assertThat(sink.events).singleElement().satisfies(e -> {
      assertThat(e.unattributed()).isEqualTo(new dev.knockwatch.events.ViolationEvent.Unattributed("short-command-id", "a"));
      assertThat(e.commandText()).isNull();
    });
    RejectedLine r = sink.rejected.get(0);
    assertThat(r.key()).isEqualTo("a/c.violations.jsonl:0");
    assertThat(r.code()).isEqualTo("short-command-id");
    assertThat(r.reason()).isEqualTo("commandId is too short: 10 characters, at least 22 required");
    assertThat(r.line()).contains("me:[REDACTED]").doesNotContain("hunter2");
  }

  private static double sample(String name, String... labelValues) {
    String[] names = labelValues.length == 1 ? new String[] {"source"}
        : new String[] {"source", name.contains("identity") ? "field" : "reason"};
    Double v = io.prometheus.client.CollectorRegistry.defaultRegistry.getSampleValue(name, names, labelValues);
    return v == null ? 0 : v;
  }

  @Test
  void theCountersGiveEachSourcesLinesBytesEventsAndRejections() throws Exception {
    Files.createDirectories(logs.resolve("a"));
    // a claim against the file name is a conflict, and counts; a short id where the layout names none is refused
    String claims = "{\"line\":\"deny openat /x\",\"commandId\":\"AAAAAAAAAAAAAAAAAAAAAA\"}";
    String text = RECORD + "\n" + claims + "\n" + RECORD + "\n";
    String bad = "{\"line\":\"deny openat /x\",\"commandId\":\"abcdefghij\"}\n";
    Files.writeString(logs.resolve("a/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl"), text);
    Files.writeString(logs.resolve("a/bad.violations.jsonl"), bad);
    double lines = sample("knockwatch_ingest_lines_read_total", "srt-violation");
    double bytes = sample("knockwatch_ingest_bytes_read_total", "srt-violation");
    double published = sample("knockwatch_ingest_events_published_total", "srt-violation");
    double rejected = sample("knockwatch_ingest_rejected_total", "srt-violation", "short-command-id");
    double conflicts = sample("knockwatch_ingest_identity_conflicts_total", "srt-violation", "commandId");
    agent().pollOnce();
    assertThat(sample("knockwatch_ingest_lines_read_total", "srt-violation") - lines).isEqualTo(4);
    assertThat(sample("knockwatch_ingest_bytes_read_total", "srt-violation") - bytes).isEqualTo(text.length() + bad.length());
    assertThat(sample("knockwatch_ingest_events_published_total", "srt-violation") - published).isEqualTo(3);
    assertThat(sample("knockwatch_ingest_rejected_total", "srt-violation", "short-command-id") - rejected).isEqualTo(1);
    assertThat(sample("knockwatch_ingest_identity_conflicts_total", "srt-violation", "commandId") - conflicts).isEqualTo(1);
  }

  @Test
  void aBatchKafkaDidNotTakeIsReadAgain() throws Exception {
    Files.createDirectories(logs.resolve("a"));
    Files.writeString(logs.resolve("a/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl"), RECORD + "\n");
    IngestAgent agent = agent();
    sink.failNextFlush = true;
    assertThatThrownBy(agent::pollOnce).isInstanceOf(EventSink.PublishException.class);
    assertThat(sink.events).isEmpty();
    assertThat(agent.pollOnce()).isEqualTo(1);
    assertThat(sink.events).hasSize(1);
  }

  @Test
  void theRunningAgentReadsOnWhileABatchIsPublishedAndLosesNothingWhenOneFails() throws Exception {
    Files.createDirectories(logs.resolve("a"));
    Path f = logs.resolve("a/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl");
    int lines = 23_456;
    Files.writeString(f, (RECORD + "\n").repeat(lines));
    FlakySink flaky = new FlakySink(2); // the second batch is refused once
    IngestAgent agent = LogLayout.forLogDirectory(logs, p -> true, logs.resolve(".checkpoint.json"), flaky,
        "host-a", Duration.ofMillis(10));
    Thread t = new Thread(agent);
    t.start();
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (flaky.distinctIds() < lines && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    agent.close();
    t.join();
    assertThat(flaky.failures).isEqualTo(1);
    assertThat(flaky.distinctIds()).isEqualTo(lines);
    // every position was committed: a restarted agent has nothing left to read
    assertThat(agent().pollOnce()).isZero();
    assertThat(sink.events).isEmpty();
  }

  /** A thread-safe sink that refuses the n-th flush (and what was sent since the one before). */
  static final class FlakySink implements EventSink {
    private final java.util.Set<String> ids = new java.util.HashSet<>();
    private final java.util.List<String> pending = new java.util.ArrayList<>();
    private final int failAt;
    private int flushes;
    volatile int failures;

    FlakySink(int failAt) {
      this.failAt = failAt;
    }

    synchronized int distinctIds() {
      return ids.size();
    }

    @Override
    public synchronized void publish(ViolationEvent event) {
      pending.add(event.eventId());
    }

    @Override
    public void reject(RejectedLine line) {
      throw new AssertionError("no line should be rejected: " + line);
    }

    @Override
    public synchronized void flush() throws PublishException {
      if (++flushes == failAt) {
        failures++;
        pending.clear();
        throw new PublishException("broker down", null);
      }
      ids.addAll(pending);
      pending.clear();
    }

    @Override
    public void close() {}
  }

  /** A sink that answers for a batch only when the test says so, in any order. */
  static class HeldSink implements EventSink {
    record Sent(java.util.List<? extends Outgoing> records, java.util.function.Consumer<Exception> done) {}

    final java.util.concurrent.BlockingQueue<Sent> sent = new java.util.concurrent.LinkedBlockingQueue<>();
    /** "send N" and "flush", in the order the agent called them. */
    final java.util.List<String> calls = java.util.Collections.synchronizedList(new java.util.ArrayList<>());

    @Override
    public void send(java.util.List<? extends Outgoing> records, java.util.function.Consumer<Exception> done) {
      calls.add("send " + records.size());
      sent.add(new Sent(records, done));
    }

    Sent next() throws InterruptedException {
      Sent s = sent.poll(30, java.util.concurrent.TimeUnit.SECONDS);
      assertThat(s).as("a batch was sent").isNotNull();
      return s;
    }

    @Override
    public void publish(ViolationEvent event) {
      throw new AssertionError("the running agent sends batches");
    }

    @Override
    public void reject(RejectedLine line) {
      throw new AssertionError("the running agent sends batches");
    }

    @Override
    public void flush() {
      calls.add("flush");
    }

    @Override
    public void close() {}
  }

  /**
   * The running agent sends what its sink prepared for each event, in the lines' order, and
   * prepares it on a parse thread, never on the publisher's (which only hands batches over).
   */
  @Test
  void theRunningAgentSendsWhatItsSinkPreparedOnTheParseThreadsInLineOrder() throws Exception {
    Files.createDirectories(logs.resolve("a"));
    int lines = 7_000;
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < lines; i++) {
      text.append(RECORD.replace("token=SECRET", "n=" + i)).append('\n');
    }
    Files.writeString(logs.resolve("a/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl"), text);
    java.util.Set<String> preparers = java.util.concurrent.ConcurrentHashMap.newKeySet();
    HeldSink held = new HeldSink() {
      @Override
      public Outgoing prepare(ViolationEvent event) {
        preparers.add(Thread.currentThread().getName());
        return new Outgoing.Event(event.toBuilder().commandText("prepared " + event.commandText()).build());
      }
    };
    IngestAgent agent = LogLayout.forLogDirectory(logs, p -> true, logs.resolve(".checkpoint.json"), held,
        "host-a", Duration.ofMillis(10));
    Thread t = new Thread(agent, "the-reader");
    t.start();
    java.util.List<Object> sent = new java.util.ArrayList<>();
    try {
      while (sent.size() < lines) {
        HeldSink.Sent s = held.next();
        s.records().forEach(r -> sent.add(((Outgoing.Event) r).event().commandText()));
        s.done().accept(null);
      }
    } finally {
      agent.close();
      t.join();
    }
    java.util.List<String> expected = new java.util.ArrayList<>();
    for (int i = 0; i < lines; i++) {
      expected.add("prepared curl -s https://example.com/?n=" + i);
    }
    assertThat(sent).containsExactlyElementsOf(expected);
    assertThat(preparers).contains("the-reader").noneMatch(name -> name.contains("publish"));
  }

  /**
   * Under a backlog the producer is left to fill its batches (its linger); once the reader is at
   * the end of its files, what it sent is flushed at once rather than held for the linger.
   */
  @Test
  void aCaughtUpAgentSendsItsLastRecordsAtOnceAndABacklogIsLeftToBatch() throws Exception {
    Files.createDirectories(logs.resolve("a"));
    Path f = logs.resolve("a/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl");
    Files.writeString(f, (RECORD + "\n").repeat(12_000));
    HeldSink held = new HeldSink();
    IngestAgent agent = LogLayout.forLogDirectory(logs, p -> true, logs.resolve(".checkpoint.json"), held,
        "host-a", Duration.ofMillis(10));
    Thread t = new Thread(agent);
    t.start();
    try {
      for (int i = 0; i < 3; i++) {
        held.next().done().accept(null);
      }
      waitFor(() -> agent.caughtUp());
      Files.writeString(f, (RECORD + "\n").repeat(3), java.nio.file.StandardOpenOption.APPEND);
      held.next().done().accept(null);
      waitFor(() -> held.calls.size() == 6);
      assertThat(held.calls).containsExactly("send 5000", "send 5000", "send 2000", "flush", "send 3", "flush");
    } finally {
      agent.close();
      t.join(30_000);
    }
  }

  /**
   * Parsed by the reader alone or by three threads, a tree of srt records, Squid lines, strace
   * (whose parser pairs lines across <unfinished ...> and <... resumed>) and curl transcripts
   * (several lines an event) gives the same events and rejected lines, in the same order.
   */
  @Test
  void threeParseThreadsGiveWhatTheReaderAloneGivesInTheSameOrder() throws Exception {
    String[] fixtures = {"strace/samples/strace-6.1-srt-0.0.83-g2-in-srt-curl-ip-direct.txt",
        "strace/samples/strace-6.1-srt-0.0.83-g4-in-srt-fs-denials.txt",
        "strace/samples/strace-6.1-srt-0.0.83-g5-readme-recipe-network-full.txt",
        "proxy/samples/srt-0.0.83-curl-7.88.1-b-https-connect-curl-v.txt",
        "proxy/samples/srt-0.0.83-curl-7.88.1-s-socks5h-curl-v.txt",
        "proxy/samples/srt-0.0.83-curl-7.88.1-c-https-noproxy-direct.txt"};
    for (int i = 0; i < fixtures.length; i++) {
      String text;
      try (java.io.InputStream in = IngestAgentTest.class.getResourceAsStream("/dev/knockwatch/ingest/formats/" + fixtures[i])) {
        text = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
      }
      String suffix = fixtures[i].startsWith("strace") ? ".strace" : ".curl.log";
      Files.createDirectories(logs.resolve("agent-" + i));
      Files.writeString(logs.resolve("agent-" + i + "/cmd" + i + "-xhfHytmXL-L6RsYw2C" + suffix), text.repeat(40));
    }
    Files.createDirectories(logs.resolve("srt"));
    StringBuilder srt = new StringBuilder();
    for (int i = 0; i < 3_000; i++) {
      srt.append(RECORD.replace("SECRET", "SECRET" + i)).append('\n').append(i % 500 == 0 ? "not json\n" : "");
    }
    Files.writeString(logs.resolve("srt/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl"), srt);
    String squid;
    try (java.io.InputStream in = IngestAgentTest.class.getResourceAsStream(
        "/dev/knockwatch/ingest/formats/squid/samples/squid-5.7-authci-access-knock.log")) {
      squid = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    }
    Files.createDirectories(logs.resolve("proxy"));
    Files.writeString(logs.resolve("proxy/access.log"), squid.repeat(300));

    ListSink alone = runToTheEnd(1);
    ListSink three = runToTheEnd(3);
    assertThat(alone.events).hasSizeGreaterThan(3_000);
    assertThat(alone.rejected).hasSizeGreaterThanOrEqualTo(6);
    assertThat(withoutIngestTime(three)).containsExactlyElementsOf(withoutIngestTime(alone));
    assertThat(three.rejected).extracting(RejectedLine::key, RejectedLine::code)
        .containsExactlyElementsOf(alone.rejected.stream().map(r -> org.assertj.core.groups.Tuple.tuple(r.key(), r.code())).toList());
  }

  /** A file appended while the running agent reads it: every line becomes one event, once, in order. */
  @Test
  void aFileAppendedWhileTheAgentReadsItGivesEachLineOnceInOrder() throws Exception {
    Files.createDirectories(logs.resolve("ci-runner-bg"));
    Files.createDirectories(logs.resolve("other"));
    Files.writeString(logs.resolve("other/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl"), RECORD + "\n");
    Path bg = logs.resolve("ci-runner-bg/background.violations.jsonl");
    int total = 60_000;
    ListSink into = new ListSink();
    IngestAgent agent = LogLayout.forLogDirectory(logs, p -> true, null, into, "host-a", Duration.ofMillis(1));
    Thread t = new Thread(agent);
    t.start();
    try (var out = Files.newBufferedWriter(bg, java.nio.charset.StandardCharsets.UTF_8)) {
      for (int i = 0; i < total; i++) {
        out.write(RECORD.replace("}", ",\"commandId\":\"BackgroundCommand" + String.format("%05d", i) + "\"}") + "\n");
        if (i % 40 == 0) {
          out.flush();
          java.util.concurrent.locks.LockSupport.parkNanos(100_000);
        }
      }
    }
    try {
      waitFor(() -> into.events.size() >= total + 1 && agent.caughtUp());
    } finally {
      agent.close();
      t.join(30_000);
    }
    java.util.List<String> ids = into.events.stream().map(ViolationEvent::commandId).filter(c -> c.startsWith("Background")).toList();
    assertThat(ids).hasSize(total);
    for (int i = 0; i < total; i++) {
      assertThat(ids.get(i)).isEqualTo("BackgroundCommand" + String.format("%05d", i));
    }
  }

  private ListSink runToTheEnd(int parseThreads) throws Exception {
    ListSink into = new ListSink();
    IngestAgent agent = LogLayout.forLogDirectory(logs, p -> true, null, into, "host-a", Duration.ofMillis(10))
        .parseThreads(parseThreads);
    Thread t = new Thread(agent);
    t.start();
    try {
      waitFor(agent::caughtUp);
    } finally {
      agent.close();
      t.join(30_000);
    }
    assertThat(agent.sharedBatches()).as("batches parsed by more than one thread").matches(n -> parseThreads == 1 ? n == 0 : n > 0);
    return into;
  }

  /** The events without the times the clock gave them: ingestion, and observation for lines with no time of their own. */
  private static java.util.List<ViolationEvent> withoutIngestTime(ListSink sink) {
    java.time.Instant fixturesEnd = java.time.Instant.parse("2026-11-30T00:00:00Z");
    return sink.events.stream().map(e -> e.toBuilder().ingestedAt(null)
        .observedAt(e.observedAt().isAfter(fixturesEnd) ? null : e.observedAt()).build()).toList();
  }

  private static void waitFor(java.util.function.BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (!condition.getAsBoolean() && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
  }

  /** How many lines an agent restarted from a copy of the checkpoint would read again. */
  private int linesLeftAfterRestart() throws Exception {
    Path copy = logs.resolveSibling(logs.getFileName() + "-checkpoint-copy.json");
    if (Files.exists(logs.resolve(".checkpoint.json"))) {
      Files.copy(logs.resolve(".checkpoint.json"), copy, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    } else {
      Files.deleteIfExists(copy);
    }
    IngestAgent restarted = LogLayout.forLogDirectory(logs, p -> !p.toString().contains("checkpoint"), copy,
        new ListSink(), "host-a", Duration.ofMillis(10));
    int n = 0;
    for (int read; (read = restarted.pollOnce()) > 0; ) {
      n += read;
    }
    return n;
  }

  @Test
  void batchesAnsweredOutOfOrderAreCommittedInOrderAndAFailedOneIsReadAgainWithAllAfterIt() throws Exception {
    Files.createDirectories(logs.resolve("a"));
    int lines = 12_000; // three batches of at most 5,000
    Files.writeString(logs.resolve("a/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl"), (RECORD + "\n").repeat(lines));
    HeldSink held = new HeldSink();
    IngestAgent agent = LogLayout.forLogDirectory(logs, p -> true, logs.resolve(".checkpoint.json"), held,
        "host-a", Duration.ofMillis(10));
    Thread t = new Thread(agent);
    t.start();
    HeldSink.Sent first = held.next();
    try {
      HeldSink.Sent second = held.next();
      HeldSink.Sent third = held.next();
      assertThat(first.records().size() + second.records().size() + third.records().size()).isEqualTo(lines);
      // all three are in flight at once: the agent did not wait for the first answer
      third.done().accept(null);
      second.done().accept(null);
      Thread.sleep(200);
      assertThat(linesLeftAfterRestart()).as("nothing committed before the first batch is taken").isEqualTo(lines);

      first.done().accept(new IllegalStateException("broker down"));
      // every line is read and sent again, from the first batch on
      java.util.Set<String> ids = new java.util.HashSet<>();
      int resent = 0;
      while (resent < lines) {
        HeldSink.Sent again = held.next();
        resent += again.records().size();
        again.records().forEach(r -> ids.add(((Outgoing.Event) r).event().eventId()));
        again.done().accept(null);
      }
      assertThat(resent).isEqualTo(lines);
      assertThat(ids).hasSize(lines);
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (!agent.caughtUp() && System.nanoTime() < deadline) {
        Thread.sleep(10);
      }
      assertThat(agent.caughtUp()).isTrue();
      assertThat(linesLeftAfterRestart()).as("everything committed").isZero();
    } finally {
      // a failing run may leave batches unanswered: answer whatever comes until the agent stops
      Thread answering = new Thread(() -> {
        try {
          while (true) {
            held.sent.take().done().accept(null);
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
      answering.setDaemon(true);
      answering.start();
      first.done().accept(null); // no effect once answered
      agent.close();
      t.join(30_000);
      answering.interrupt();
    }
  }

  @Test
  void aRestartResumesAfterWhatWasPublished() throws Exception {
    Files.createDirectories(logs.resolve("a"));
    Path f = logs.resolve("a/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl");
    Files.writeString(f, RECORD + "\n");
    agent().pollOnce();
    Files.writeString(f, RECORD + "\n" + RECORD + "\n");
    assertThat(agent().pollOnce()).isEqualTo(1);
    assertThat(sink.events).hasSize(2);
    assertThat(sink.events.get(1).origin().offset()).isEqualTo(RECORD.length() + 1);
  }

  @Test
  void blankLinesAreSkippedSilently() throws Exception {
    Files.createDirectories(logs.resolve("a"));
    Files.writeString(logs.resolve("a/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl"), "\n  \n" + RECORD + "\n");
    agent().pollOnce();
    assertThat(sink.events).hasSize(1);
    assertThat(sink.rejected).isEmpty();
  }

  @Test
  void binaryJunkIsRejectedNotFatal() throws Exception {
    Files.createDirectories(logs.resolve("a"));
    Files.write(logs.resolve("a/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl"),
        new byte[] {0x7f, 'E', 'L', 'F', 0, 0, 1, 2, 3, '\n', '{', '\n'});
    agent().pollOnce();
    assertThat(sink.rejected).extracting(RejectedLine::code).containsExactly("binary", "unparseable");
  }

  @Test
  void aLineOverTheLimitIsRejectedWithItsFirstBytes() throws Exception {
    Files.createDirectories(logs.resolve("a"));
    Files.writeString(logs.resolve("a/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl"),
        "{\"line\":\"" + "x".repeat(IngestAgent.MAX_LINE_BYTES * 2) + "\"}\n" + RECORD + "\n");
    agent().pollOnce();
    assertThat(sink.rejected).singleElement().satisfies(r -> {
      assertThat(r.code()).isEqualTo("line-too-long");
      assertThat(r.line()).startsWith("{\"line\":\"xxx").hasSizeLessThan(IngestAgent.MAX_LINE_BYTES);
    });
    assertThat(sink.events).hasSize(1);
  }

  /** srt's record of a command whose text is {@code padding} long: the refusal first, the time and id after the command. */
  private static String padded(int padding) {
    return "{\"line\":\"deny network-outbound pastebin.com:443 (host is not on the allow list)\","
        + "\"encodedCommand\":\"eGhmSHl0bVhMLUw2UnNZdzJDclNqQQ==\",\"command\":\"curl -d @- <<'EOF' "
        + "x".repeat(padding) + " EOF\",\"timestamp\":\"2026-11-29T18:45:32.887Z\",\"commandId\":\"xhfHytmXL-L6RsYw2CrSjA\"}";
  }

  @Test
  void paddingCannotHideARefusalARecordPastTheBoundYieldsItsEventWithItsTime() throws Exception {
    Files.createDirectories(logs.resolve("a"));
    // a 70 KB inline script, and ten megabytes of it: each record keeps its start and its end
    Files.writeString(logs.resolve("a/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl"),
        padded(70_000) + "\n" + padded(10 << 20) + "\n" + RECORD + "\n");
    while (agent().pollOnce() > 0) {
      // all of it
    }
    assertThat(sink.rejected).isEmpty();
    assertThat(sink.events).hasSize(3);
    assertThat(sink.events.subList(0, 2)).allSatisfy(e -> {
      assertThat(e.host()).isEqualTo("pastebin.com");
      assertThat(e.commandId()).isEqualTo("xhfHytmXL-L6RsYw2CrSjA");
      assertThat(e.observedAt()).isEqualTo(java.time.Instant.parse("2026-11-29T18:45:32.887Z"));
      assertThat(e.commandText()).startsWith("curl -d @- <<'EOF' xxx").endsWith("…")
          .hasSizeLessThanOrEqualTo(Sanitize.MAX_COMMAND_CHARS + 1);
    });
  }

  @Test
  void aRecordCutOffBeforeItsEndStillYieldsTheRefusalItStartsWith() throws Exception {
    Files.createDirectories(logs.resolve("a"));
    String record = padded(200_000);
    // the writer stopped inside the command, long past the bound, and never ended the line
    Files.writeString(logs.resolve("a/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl"), record.substring(0, 150_000));
    agent().pollOnce();
    assertThat(sink.rejected).isEmpty();
    assertThat(sink.events).singleElement().satisfies(e -> {
      assertThat(e.host()).isEqualTo("pastebin.com");
      assertThat(e.commandId()).as("from the encodedCommand read before the cut").isEqualTo("xhfHytmXL-L6RsYw2CrSjA");
    });
  }

  /** srt's record of refusal {@code n}: each one's content is its own. */
  private static String numbered(int n) {
    return "{\"line\":\"deny network-outbound door-" + n + ".test:443 (host is not on the allow list)\","
        + "\"commandId\":\"xhfHytmXL-L6RsYw2CrSjA\",\"timestamp\":\"2026-11-29T18:45:32.887Z\"}\n";
  }

  /** A sink that takes a batch and dies before Kafka's answer: the events went out, the positions were not committed. */
  private static final class KilledBeforeTheAnswer implements EventSink {
    final java.util.List<ViolationEvent> sent = new java.util.ArrayList<>();

    @Override public void publish(ViolationEvent event) { sent.add(event); }
    @Override public void reject(RejectedLine rejected) { }
    @Override public void flush() throws PublishException { throw new PublishException("killed before Kafka answered", null); }
    @Override public void close() { }
  }

  private static java.util.Map<String, String> idsByHost(java.util.List<ViolationEvent> events) {
    java.util.Map<String, String> out = new java.util.TreeMap<>();
    events.forEach(e -> assertThat(out.put(e.host(), e.eventId())).as("%s read twice", e.host()).isNull());
    return out;
  }

  @Test
  void aLineSentBeforeACrashAndReadAgainAfterItsFileWasRotatedKeepsItsId() throws Exception {
    Path file = Files.createDirectories(logs.resolve("a")).resolve("xhfHytmXL-L6RsYw2CrSjA.violations.jsonl");
    Files.writeString(file, numbered(1) + numbered(2));
    agent().pollOnce();
    Files.writeString(file, numbered(3), java.nio.file.StandardOpenOption.APPEND);
    KilledBeforeTheAnswer killed = new KilledBeforeTheAnswer();
    IngestAgent dying = LogLayout.forLogDirectory(logs, p -> true, logs.resolve(".checkpoint.json"), killed, "host-a",
        Duration.ofMillis(10));
    assertThatThrownBy(dying::pollOnce).isInstanceOf(EventSink.PublishException.class);
    // logrotate's mv while the agent is down, and the writer's new file
    Files.move(file, file.resolveSibling(file.getFileName() + ".1"));
    Files.writeString(file, numbered(4));
    while (agent().pollOnce() > 0) {
      // the restarted agent
    }
    java.util.Map<String, String> ids = idsByHost(sink.events);
    assertThat(ids).containsOnlyKeys("door-1.test", "door-2.test", "door-3.test", "door-4.test");
    assertThat(ids.get("door-3.test")).as("the same line, the same id, under its rotated name")
        .isEqualTo(killed.sent.get(0).eventId());
    assertThat(new java.util.HashSet<>(ids.values())).hasSize(4);
  }

  @Test
  void copytruncateWhileTheAgentIsDownLosesAndRepeatsNoLineAndKeepsTheIdsOfWhatWasSent() throws Exception {
    Path file = Files.createDirectories(logs.resolve("a")).resolve("xhfHytmXL-L6RsYw2CrSjA.violations.jsonl");
    Files.writeString(file, numbered(1) + numbered(2));
    agent().pollOnce();
    Files.writeString(file, numbered(3), java.nio.file.StandardOpenOption.APPEND);
    KilledBeforeTheAnswer killed = new KilledBeforeTheAnswer();
    assertThatThrownBy(LogLayout.forLogDirectory(logs, p -> true, logs.resolve(".checkpoint.json"), killed, "host-a",
        Duration.ofMillis(10))::pollOnce).isInstanceOf(EventSink.PublishException.class);
    Files.copy(file, file.resolveSibling(file.getFileName() + "-20261130"));
    Files.writeString(file, "", java.nio.file.StandardOpenOption.TRUNCATE_EXISTING);
    Files.writeString(file, numbered(4) + numbered(5) + numbered(6) + numbered(7), java.nio.file.StandardOpenOption.APPEND);
    while (agent().pollOnce() > 0) {
      // the restarted agent
    }
    java.util.Map<String, String> ids = idsByHost(sink.events);
    assertThat(ids).containsOnlyKeys("door-1.test", "door-2.test", "door-3.test", "door-4.test", "door-5.test",
        "door-6.test", "door-7.test");
    assertThat(ids.get("door-3.test")).isEqualTo(killed.sent.get(0).eventId());
    assertThat(new java.util.HashSet<>(ids.values())).hasSize(7);
  }

  @Test
  void straceFilesInTheSameTreeAreReadAsStrace() throws Exception {
    Files.createDirectories(logs.resolve("ci-7"));
    Files.writeString(logs.resolve("ci-7/xhfHytmXL-L6RsYw2CrSjA.strace"),
        "5     socket(AF_UNIX, SOCK_STREAM|SOCK_CLOEXEC|SOCK_NONBLOCK, 0) = -1 EPERM (Operation not permitted)\n"
        + "5     connect(5, {sa_family=AF_INET, sin_port=htons(443), sin_addr=inet_addr(\"93.184.215.14\")}, 16)"
        + " = -1 ENETUNREACH (Network is unreachable)\n");
    assertThat(agent().pollOnce()).isEqualTo(2);
    assertThat(sink.events).singleElement().satisfies(e -> {
      assertThat(e.source()).isEqualTo("strace");
      assertThat(e.commandId()).isEqualTo("xhfHytmXL-L6RsYw2CrSjA");
      assertThat(e.agentId()).isEqualTo("ci-7");
      assertThat(e.host()).isEqualTo("93.184.215.14");
    });
    assertThat(sink.rejected).isEmpty();
  }

  @Test
  void pathPartsNameTheAgentAndTheCommand() {
    assertThat(LogLayout.agentIdOf("ci-1/abc.violations.jsonl")).isEqualTo("ci-1");
    assertThat(LogLayout.agentIdOf("abc.violations.jsonl")).isNull();
    assertThat(Formats.stem(Formats.ofFileName("run.1:a.violations.jsonl").orElseThrow(), "run.1:a.violations.jsonl"))
        .isEqualTo("run.1:a");
    assertThat(Formats.ofFileName("x.strace").orElseThrow().wireName()).isEqualTo("strace");
    assertThat(Formats.ofFileName("x.stdout.txt")).isEmpty();
  }
}
