package dev.knockwatch.ingest;

import dev.knockwatch.events.Redactor;
import dev.knockwatch.events.RejectedLine;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.EventSink.PublishException;
import dev.knockwatch.ingest.srt.SrtViolationParser;
import dev.knockwatch.ingest.tail.FileTailer;
import dev.knockwatch.ingest.tail.TailedLine;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ingest loop: tail the sandbox logs, parse each line, publish events (or the rejected line
 * with its reason), and commit the tail positions only once Kafka has acknowledged the batch.
 * Nothing is lost: a batch Kafka did not take is read again.
 */
public final class IngestAgent implements Runnable, AutoCloseable {

  public static final int MAX_LINE_BYTES = 64 * 1024;
  static final int MAX_REJECTED_LINE_CHARS = 8192;
  private static final int BATCH = 5_000;
  private static final Logger log = LoggerFactory.getLogger(IngestAgent.class);

  private final FileTailer tailer;
  private final LineParser parser;
  private final String sourceLabel;
  private final EventSink publisher;
  private final String ingestHost;
  private final Clock clock;
  private final Duration pollInterval;
  private volatile boolean running = true;
  private volatile Thread thread;

  public IngestAgent(FileTailer tailer, LineParser parser, String sourceLabel, EventSink publisher,
      String ingestHost, Clock clock, Duration pollInterval) {
    this.tailer = tailer;
    this.parser = parser;
    this.sourceLabel = sourceLabel;
    this.publisher = publisher;
    this.ingestHost = ingestHost;
    this.clock = clock;
    this.pollInterval = pollInterval;
  }

  /** An agent for srt violation records ({@code <root>/<agentId>/<commandId>.violations.jsonl}). */
  public static IngestAgent forSrtViolations(Path root, Path checkpointFile, EventSink publisher,
      String ingestHost, Duration pollInterval) {
    return forSrtViolations(root, p -> true, checkpointFile, publisher, ingestHost, pollInterval);
  }

  /** The same, for only the files under {@code root} that {@code only} accepts. */
  public static IngestAgent forSrtViolations(Path root, Predicate<Path> only, Path checkpointFile,
      EventSink publisher, String ingestHost, Duration pollInterval) {
    FileTailer tailer = new FileTailer(root,
        p -> p.getFileName().toString().endsWith(SrtViolationParser.FILE_SUFFIX) && only.test(p),
        checkpointFile, MAX_LINE_BYTES);
    return new IngestAgent(tailer, new SrtViolationParser(), "srt-violation", publisher, ingestHost,
        Clock.systemUTC(), pollInterval);
  }

  @Override
  public void run() {
    thread = Thread.currentThread();
    while (running) {
      int n;
      try {
        n = pollOnce();
      } catch (PublishException e) {
        IngestMetrics.PUBLISH_FAILURES.inc();
        log.warn("{}; the batch will be read again", e.getMessage());
        n = 0;
      } catch (RuntimeException e) {
        // e.g. the checkpoint could not be written: keep the agent alive, read the batch again.
        IngestMetrics.PUBLISH_FAILURES.inc();
        log.error("ingest batch failed; it will be read again", e);
        tailer.rewind();
        n = 0;
      }
      if (n == 0 && running) {
        try {
          Thread.sleep(pollInterval.toMillis());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }
  }

  /**
   * Reads, parses and publishes one batch, and commits its positions once Kafka took it.
   *
   * @return the number of lines handled
   */
  public int pollOnce() throws PublishException {
    List<TailedLine> lines = tailer.poll(BATCH);
    IngestMetrics.LAG_BYTES.labels(sourceLabel).set(tailer.lagBytes());
    if (lines.isEmpty()) {
      return 0;
    }
    for (TailedLine line : lines) {
      handle(line);
    }
    try {
      publisher.flush();
    } catch (PublishException e) {
      tailer.rewind();
      throw e;
    }
    tailer.commit();
    return lines.size();
  }

  private void handle(TailedLine line) {
    IngestMetrics.LINES.labels(sourceLabel).inc();
    IngestMetrics.BYTES.labels(sourceLabel).inc(line.end() - line.offset());
    if (line.text().isBlank()) {
      return;
    }
    if (line.truncated()) {
      reject(line, Rejection.LINE_TOO_LONG, "line is longer than " + MAX_LINE_BYTES + " bytes");
      return;
    }
    if (isBinary(line.text())) {
      reject(line, Rejection.BINARY, "not text: NUL bytes or mostly control characters");
      return;
    }
    if (line.invalidUtf8()) {
      IngestMetrics.INVALID_UTF8.labels(sourceLabel).inc();
    }
    SourceLine src = new SourceLine(line.file(), line.offset(), line.text(), agentIdOf(line.file()),
        commandIdOf(line.file()), ingestHost, clock.instant());
    Parsed parsed = parser.parse(src);
    if (parsed instanceof Parsed.Rejected r) {
      reject(line, r.code(), r.reason());
    } else if (parsed instanceof Parsed.Skipped s) {
      IngestMetrics.SKIPPED.labels(sourceLabel, s.reason()).inc();
    } else if (parsed instanceof Parsed.Events ev) {
      for (ViolationEvent e : ev.events()) {
        publisher.publish(e);
        IngestMetrics.PUBLISHED.labels(sourceLabel).inc();
      }
    }
  }

  private void reject(TailedLine line, Rejection code, String reason) {
    IngestMetrics.REJECTED.labels(sourceLabel, code.code()).inc();
    publisher.reject(new RejectedLine(line.file(), line.offset(), ingestHost, code.code(), reason,
        Sanitize.text(Redactor.redact(line.text()), MAX_REJECTED_LINE_CHARS), clock.instant()));
  }

  /** A NUL byte, or more than one character in ten a control character other than tab. */
  static boolean isBinary(String text) {
    int control = 0;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == 0) {
        return true;
      }
      if (c < 0x20 && c != '\t') {
        control++;
      }
    }
    return control * 10 > text.length();
  }

  /** {@code <agentId>/<commandId>.<suffix>}: the directory names the agent. */
  static String agentIdOf(String relativeFile) {
    String[] parts = relativeFile.split("/");
    return parts.length >= 2 ? parts[parts.length - 2] : null;
  }

  static String commandIdOf(String relativeFile) {
    String name = relativeFile.substring(relativeFile.lastIndexOf('/') + 1);
    return name.endsWith(SrtViolationParser.FILE_SUFFIX)
        ? name.substring(0, name.length() - SrtViolationParser.FILE_SUFFIX.length())
        : null;
  }

  /** Stops after the batch in hand is published and committed. */
  @Override
  public void close() {
    running = false;
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
