package dev.knockwatch.ingest;

import dev.knockwatch.ingest.spi.Rejection;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.events.Durations;
import dev.knockwatch.ingest.EventSink.PublishException;
import dev.knockwatch.ingest.spi.SourceFormat;
import dev.knockwatch.ingest.tail.FileTailer;
import dev.knockwatch.ingest.tail.TailedLine;
import io.prometheus.client.Counter;
import java.nio.file.Files;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ingest loop: tail the sandbox logs, parse each line, publish events (or the rejected line
 * with its reason), and commit the tail positions only once Kafka has acknowledged the batch.
 * Nothing is lost: a batch Kafka did not take is read again.
 */
public final class IngestAgent implements Runnable, AutoCloseable {

  public static final int MAX_LINE_BYTES = SourceFormat.DEFAULT_MAX_LINE_BYTES;
  static final int MAX_REJECTED_LINE_CHARS = 8192;
  private static final int BATCH = 5_000;
  /** Batches handed to Kafka and not yet answered, at most: 20,000 lines' events in memory. */
  static final int MAX_IN_FLIGHT = 4;
  static final int MAX_OPEN_PARSERS = 10_000;
  /** Caught up on a watched tree, the longest wait for the kernel's word before polling anyway. */
  static final Duration IDLE_WAIT = Duration.ofSeconds(1);
  /** A batch smaller than this is parsed by the reader alone: handing it over would cost more than it saves. */
  private static final int PARALLEL_FROM = 500;
  /** A run of one file's lines longer than this is split among threads, when its lines stand alone. */
  private static final int SHARE_LINES = BATCH / 8;
  static final Duration MIN_BACKOFF = Duration.ofMillis(100);
  static final Duration MAX_BACKOFF = Duration.ofSeconds(30);
  private static final Logger log = LoggerFactory.getLogger(IngestAgent.class);
  /** The sources whose parser failed on a line, said once each. */

  /**
   * One tailed tree and what its files are: {@code context} tells, for a path relative to the
   * tailer's root, the format and the ids the path carries; {@code namePrefix} is put before
   * that path wherever a file is named (origin, event id, rejected key).
   */
  public record Feed(FileTailer tailer, Function<String, FileContext> context, String namePrefix) {}

  /**
   * What a file is: its format (with a parser factory carrying any per-source options) and the
   * ids its path gives; a null type means nothing tells the format, and its lines are rejected.
   */
  public record FileContext(SourceFormat format, Supplier<LineParser> parsers, String agentId, String commandId) {

    /** The format's name, the {@code source} label of its metrics; "unknown" while it cannot be told. */
    public String sourceLabel() {
      return format == null ? "unknown" : format.wireName();
    }

    /** The format's name as its events' and notices' {@code source}; null while it cannot be told. */
    public String source() {
      return format == null ? null : format.wireName();
    }
  }

  private final List<Feed> feeds;
  private final Map<String, LineParser> parsers = new LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, LineParser> eldest) {
      return size() > MAX_OPEN_PARSERS;
    }
  };
  private final Map<String, IngestMetrics.PerSource> meters = new HashMap<>();
  private final EventSink sink;
  /** What each line becomes, and what that sends: one outcome per line. */
  private final LineSender sender;
  private final String ingestHost;
  private final Clock clock;
  private final Duration pollInterval;
  private volatile boolean running = true;
  private volatile Thread thread;
  private volatile boolean caughtUp;
  /** The reader alone: how {@link #pollOnce} parses, and {@link #run()} outside its run. */
  private static final ParallelParse SEQUENTIAL = new ParallelParse(1);
  /** The threads that parse beside the reader while {@link #run()} runs. */
  private volatile ParallelParse parallel = SEQUENTIAL;
  private int parseThreads = Math.min(4, Runtime.getRuntime().availableProcessors());
  /** Batches parsed by more than one thread in earlier runs. */
  private volatile long sharedBatches;

  public IngestAgent(List<Feed> feeds, EventSink sink, String ingestHost, Clock clock, Duration pollInterval) {
    this.feeds = List.copyOf(feeds);
    this.sink = sink;
    this.ingestHost = ingestHost;
    this.clock = clock;
    this.sender = new LineSender(sink, ingestHost, clock);
    this.pollInterval = pollInterval;
    // between two idle polls the busy files are read at once, without a walk of every file
    this.feeds.forEach(f -> f.tailer().walkAtMostEvery(pollInterval));
  }

  private boolean wholeFiles;

  /** How far ahead of the ingest clock a line's time may be and still count (default 5 minutes). */
  public IngestAgent maxAhead(Duration bound) {
    if (bound.isNegative()) {
      throw new IllegalArgumentException("the bound ahead of the clock cannot be negative: " + bound);
    }
    sender.maxAhead = bound;
    return this;
  }

  /** The files are finished (parse, replay, rules tests): their last line is read without its newline. */
  public IngestAgent wholeFiles() {
    wholeFiles = true;
    feeds.forEach(f -> f.tailer().wholeFiles());
    return this;
  }

  /**
   * What became of each line read: its events, a rejection, or a counted skip. Called from the
   * parse threads, possibly at once for lines of different files.
   */
  @FunctionalInterface
  public interface LineOutcomes {
    void line(TailedLine line, Parsed outcome);
  }

  /** Tells {@code observer} the outcome of every line read (the property tests account for every byte). */
  public IngestAgent observing(LineOutcomes observer) {
    sender.outcomes = observer;
    return this;
  }

  /**
   * Replay: a line with no time it may keep takes its file's modification time, not the ingest
   * clock, so the same files replay the same way on any day.
   */
  public IngestAgent untimedFromFiles() {
    sender.untimedFromFiles = true;
    return this;
  }

  /**
   * How many threads {@link #run()} parses with, the reader included (default: the cores, at
   * most 4). One file's lines are always parsed in order by one thread at a time, and the events
   * keep the order of their lines, whatever the number.
   */
  /**
   * How many lines a second ingest reads of one command's file at most: far above what a
   * sandboxed command refuses (srt: hundreds a second), far below what one file could push
   * through detection (FloodFairnessTest).
   */
  public static final int PER_COMMAND_LINES_PER_SECOND = 5_000;

  /**
   * Reads each one-command file ({@link SourceFormat#perCommand}) at {@code linesPerSecond} at most,
   * so that a flood of one command cannot fill the pipeline ahead of another command's page.
   * Shared logs (Squid, JSON) are not paced: they carry many commands.
   */
  public IngestAgent pacePerCommand(int linesPerSecond) {
    for (Feed f : feeds) {
      f.tailer().pace(p -> Formats.ofFileName(LogLayout.fileName(p.getFileName().toString()))
          .map(SourceFormat::perCommand).orElse(false), linesPerSecond);
    }
    return this;
  }

  public IngestAgent parseThreads(int n) {
    if (n < 1) {
      throw new IllegalArgumentException("parse threads must be at least 1, not " + n);
    }
    this.parseThreads = n;
    return this;
  }

  /**
   * Polls until closed, on two threads: this one reads and parses the next batch while a
   * publisher thread hands the ones before it to Kafka without waiting for their
   * acknowledgement (at most {@link #MAX_IN_FLIGHT} batches unanswered, so reading stays bounded
   * when Kafka is slow); a batch's positions are committed (here) only once Kafka took it and
   * every batch before it.
   * When Kafka does not take a batch, the agent stops reading, lets the batches in flight
   * drain, goes back to the last committed positions (those lines are read again), backs off up
   * to {@link #MAX_BACKOFF}, says so in the log once a minute and in
   * {@code knockwatch_ingest_kafka_up}, and goes on forever.
   */
  @Override
  public void run() {
    thread = Thread.currentThread();
    Duration backoff = Duration.ZERO;
    Instant lastComplaint = Instant.EPOCH;
    IngestMetrics.publishing(true);
    BatchPublisher batches = new BatchPublisher(sink, MAX_IN_FLIGHT, this::commit);
    Thread publisherThread = new Thread(batches, "knockwatch-ingest-publish");
    publisherThread.setDaemon(true);
    publisherThread.start();
    parallel = new ParallelParse(parseThreads);
    // while it runs, an idle tree is walked only when the kernel says it changed (or every 30 s)
    feeds.forEach(f -> f.tailer().watchChanges());
    try {
      while (running) {
        String failure = null;
        int n = 0;
        try {
          if (batches.commitAcknowledged() > 0 && !backoff.isZero()) {
            log.info("Kafka takes batches again; reading resumed");
            backoff = Duration.ZERO;
            lastComplaint = Instant.EPOCH;
            IngestMetrics.publishing(true);
          }
          failure = batches.failure();
          if (failure == null) {
            Batch batch = read(false);
            n = batch.lines;
            if (n > 0) {
              batches.submit(batch);
            }
          }
        } catch (RuntimeException e) {
          failure = e.toString(); // e.g. the checkpoint could not be written
        }
        if (failure != null) {
          batches.drainAndReset();
          feeds.forEach(f -> f.tailer().rewind());
          IngestMetrics.PUBLISH_FAILURES.inc();
          IngestMetrics.publishing(false);
          backoff = Durations.doubled(backoff, MIN_BACKOFF, MAX_BACKOFF);
          if (Duration.between(lastComplaint, Instant.now()).toSeconds() >= 60) {
            log.warn("{}; reading stopped, the batch will be published again (retrying every {} s at most)",
                failure, MAX_BACKOFF.toSeconds());
            lastComplaint = Instant.now();
          }
        }
        caughtUp = failure == null && n == 0 && batches.idle() && sawEveryFile;
        Duration pause = failure != null ? backoff : n == 0 ? pollInterval : Duration.ZERO;
        // caught up on one watched tree: wait for the kernel to say it changed, not a poll every interval
        boolean awaited = caughtUp && feeds.size() == 1 && running && feeds.get(0).tailer().awaitChange(IDLE_WAIT);
        if (!awaited && !pause.isZero() && running) {
          Thread.sleep(Math.max(1, pause.toMillis()));
        }
      }
      // Stop: the batches handed over are published and committed before the agent returns.
      batches.drain();
      batches.commitAcknowledged();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      log.warn("the last positions could not be committed: {} (those lines will be read again)", e.toString());
    } finally {
      feeds.forEach(f -> f.tailer().close());
      publisherThread.interrupt();
      sharedBatches += parallel.sharedCalls();
      parallel.close();
      parallel = SEQUENTIAL;
    }
  }

  /** What the process's KafkaWatch saw: whether Kafka answers at all (in {@code knockwatch_ingest_kafka_up}). */
  public static void kafkaAnswers(boolean up) {
    IngestMetrics.answering(up);
  }

  /** How many batches more than one thread parsed: the reader alone parses small batches and single files. */
  public long sharedBatches() {
    return sharedBatches + parallel.sharedCalls();
  }

  /**
   * True while the running agent has nothing left to do: its last poll walked every file and found
   * no new line, and every batch before it was acknowledged and committed.
   */
  public boolean caughtUp() {
    return caughtUp;
  }


  /**
   * Reads, parses and publishes one batch on this thread, and commits its positions once Kafka
   * took it (the synchronous form of {@link #run()}'s loop).
   *
   * @return the number of lines handled
   */
  public int pollOnce() throws PublishException {
    Batch batch = read(true);
    if (batch.lines == 0) {
      return 0;
    }
    long started = System.nanoTime();
    java.util.concurrent.CompletableFuture<Exception> answer = new java.util.concurrent.CompletableFuture<>();
    try {
      sink.send(batch.records, answer::complete);
    } catch (RuntimeException e) {
      answer.complete(e);
    }
    Exception failed = answer.join();
    if (failed != null) {
      feeds.forEach(f -> f.tailer().rewind());
      throw failed instanceof PublishException p ? p : new PublishException(BatchPublisher.message(failed), failed);
    }
    IngestMetrics.PUBLISH_SECONDS.observe((System.nanoTime() - started) / 1e9);
    batch.countPublished();
    commit(batch);
    return batch.lines;
  }

  /** Kafka took the batch and every one before it: its positions become durable. */
  private void commit(Batch batch) {
    for (int i = 0; i < feeds.size(); i++) {
      feeds.get(i).tailer().commit(batch.marks.get(i));
    }
    IngestMetrics.CHECKPOINT_TIME.setToCurrentTime();
  }

  /** knockwatch_ingest_lag_bytes, by source. */
  private final LagGauge lagGauge = new LagGauge();

  /** Whether the last {@link #read(boolean)} walked every feed's files (not only the busy ones). */
  private boolean sawEveryFile;

  /** One batch: from every file when {@code everyFile}, else from the busy ones between two walks. */
  private Batch read(boolean everyFile) {
    int handled = 0;
    sawEveryFile = true;
    Map<String, Long> lag = new HashMap<>();
    boolean lagDue = lagGauge.due(feeds.stream().anyMatch(f -> f.tailer().lagMayHaveChanged()));
    List<Outgoing> records = new ArrayList<>();
    Map<Counter.Child, int[]> published = new HashMap<>();
    List<FileTailer.Mark> marks = new ArrayList<>(feeds.size());
    boolean full = false;
    for (Feed feed : feeds) {
      if (!full) {
        List<TailedLine> lines = feed.tailer().poll(BATCH - handled, everyFile);
        sawEveryFile &= feed.tailer().lastPollSawEveryFile();
        if (lagDue) {
          feed.tailer().lagBytes(rel -> feed.context().apply(rel).sourceLabel(), lag);
        }
        parse(feed, lines, records, published);
        handled += lines.size();
        full = handled >= BATCH;
      }
      marks.add(feed.tailer().mark());
    }
    if (handled == 0) {
      handled = endQuiet(records, published);
    }
    if (lagDue) {
      lagGauge.set(lag);
    }
    return new Batch(records, marks, handled, handled < BATCH, published);
  }

  /** Files whose parser held a half-read refusal after their last line (reader thread only). */
  private final QuietFiles quietFiles = new QuietFiles();

  /**
   * Ends the half-read refusals of files that went quiet (at once for finished files): a refusal
   * whose answer the agent cut off after its headers is published with what is known of it.
   * Returns how many files were ended (counted as lines: the batch is published like any other).
   */
  private int endQuiet(List<Outgoing> out, Map<Counter.Child, int[]> published) {
    long quiet = wholeFiles ? 0 : FileTailer.DEFAULT_PARTIAL_FLUSH.toNanos();
    return quietFiles.end(parsers::get, quiet, (parser, q) -> {
      int prepared = sender.send(parser.end(), q.line(), clock.instant(), q.sourceLabel(), q.source(), out);
      published.computeIfAbsent(meters.computeIfAbsent(q.sourceLabel(), IngestMetrics.PerSource::of).published(),
          m -> new int[1])[0] += prepared;
    });
  }

  /**
   * One file's run of lines in a batch (or a part of it), and what parsing them needs: looked up
   * by the reader, so a helper touches nothing the reader keeps. {@code out} gets its records,
   * {@code published} counts its events.
   */
  private record Run(Feed feed, FileContext ctx, String sourceLabel, IngestMetrics.PerSource meters,
                     LineParser parser, List<TailedLine> lines, List<Outgoing> out, int[] published) {

    Run part(int from, int to) {
      return new Run(feed, ctx, sourceLabel, meters, parser, lines.subList(from, to), new ArrayList<>(), new int[1]);
    }
  }

  /**
   * Parses a poll's lines into {@code out}, in their order. Each file's lines are parsed by one
   * thread, in order, unless its parser reads each line alone ({@link LineParser#linesStandAlone()}),
   * when a long run is cut in parts for several threads ({@link ParallelParse}).
   */
  private void parse(Feed feed, List<TailedLine> lines, List<Outgoing> out, Map<Counter.Child, int[]> published) {
    Map<String, Run> byFile = new LinkedHashMap<>();
    Run last = null;
    for (TailedLine line : lines) {
      // a poll gives each file's lines together: look the file up only when it changes
      if (last == null || !last.lines().get(0).file().equals(line.file())) {
        last = byFile.get(line.file());
        if (last == null) {
          last = run(feed, line.file());
          byFile.put(line.file(), last);
        }
      }
      last.lines().add(line);
    }
    ParallelParse threads = parallel;
    List<Run> runs = new ArrayList<>();
    for (Run run : byFile.values()) {
      int n = run.lines().size();
      if (threads.shares() && run.parser() != null && run.parser().linesStandAlone() && n > SHARE_LINES) {
        for (int i = 0; i < n; i += SHARE_LINES) {
          runs.add(run.part(i, Math.min(n, i + SHARE_LINES)));
        }
      } else {
        runs.add(run);
      }
    }
    // a small batch is parsed by the reader alone: handing it over would cost more than it saves
    threads.forEach(runs, r -> r.lines().size(), lines.size() < PARALLEL_FROM, this::parse);
    for (Run run : byFile.values()) {
      if (run.parser() != null && run.parser().pending()) {
        List<TailedLine> read = run.lines();
        quietFiles.held(feed.namePrefix() + read.get(0).file(), read.get(read.size() - 1), run.sourceLabel(),
            run.ctx().source());
      }
    }
    for (Run run : runs) {
      out.addAll(run.out());
      published.computeIfAbsent(run.meters().published(), m -> new int[1])[0] += run.published()[0];
    }
  }

  private Run run(Feed feed, String file) {
    FileContext ctx = feed.context().apply(file);
    String sourceLabel = ctx.sourceLabel();
    LineParser parser = ctx.format() == null ? null
        : parsers.computeIfAbsent(feed.namePrefix() + file, f -> ctx.parsers().get());
    return new Run(feed, ctx, sourceLabel, meters.computeIfAbsent(sourceLabel, IngestMetrics.PerSource::of), parser,
        new ArrayList<>(), new ArrayList<>(), new int[1]);
  }

  private void parse(Run run) {
    long bytes = 0;
    for (TailedLine line : run.lines()) {
      bytes += line.end() - line.offset();
      handle(run, line);
    }
    // counted once a run: two parse threads adding to one counter per line contend for it
    run.meters().lines().inc(run.lines().size());
    run.meters().bytes().inc(bytes);
  }

  /**
   * One line, one outcome: its events, a rejection with its code, or a counted skip with its
   * reason (docs/FORMATS.md lists them). Nothing returns without one: a blank line is a skip
   * ({@code blank}) unless its format reads it (a raw response's end of headers).
   */
  private void handle(Run run, TailedLine tailed) {
    Feed feed = run.feed();
    TailedLine line = feed.namePrefix().isEmpty() ? tailed : new TailedLine(feed.namePrefix() + tailed.file(),
        tailed.offset(), tailed.end(), tailed.text(), tailed.truncated(), tailed.invalidUtf8(), tailed.binary(),
        tailed.fileModifiedAt(), feed.namePrefix() + tailed.idName());
    String sourceLabel = run.sourceLabel();
    if (line.truncated()) {
      IngestMetrics.LONG_LINES.labels(sourceLabel).inc();
    }
    if (line.invalidUtf8() && !line.binary()) {
      IngestMetrics.INVALID_UTF8.labels(sourceLabel).inc();
    }
    Instant ingestedAt = clock.instant();
    Parsed parsed = sender.outcome(run.parser(), run.ctx(), run.sourceLabel(), line, ingestedAt);
    if (parsed instanceof Parsed.Rejected r && line.truncated()) {
      parsed = Parsed.rejected(Rejection.LINE_TOO_LONG, "line is longer than "
          + (run.ctx().format() == null ? MAX_LINE_BYTES : run.ctx().format().maxLineBytes()) + " bytes, and its start and end, kept, do not parse: " + r.reason());
    }
    run.published()[0] += sender.send(parsed, line, ingestedAt, sourceLabel, run.ctx().source(), run.out());
  }

  /** Stops after the batch in hand is published and committed. */
  @Override
  public void close() {
    running = false;
    feeds.forEach(f -> f.tailer().wake());
    Thread t = thread;
    if (t != null && t != Thread.currentThread()) {
      try {
        t.join(30_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
