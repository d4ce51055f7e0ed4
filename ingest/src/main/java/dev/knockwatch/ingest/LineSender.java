package dev.knockwatch.ingest;

import dev.knockwatch.ingest.spi.EventIds;
import dev.knockwatch.ingest.spi.Rejection;
import dev.knockwatch.ingest.spi.SourceLine;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.events.CommandId;
import dev.knockwatch.events.RejectedLine;
import dev.knockwatch.events.Redactor;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.tail.TailedLine;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One line, one outcome (docs/FORMATS.md "What each line becomes"): what a parser makes of a
 * line, and what that outcome sends — its events, each with its time settled, its command id
 * checked and its fields made safe; or its rejected line, with a notice when it was a refusal
 * rejected for whose it is; or a counted skip. Used by {@link IngestAgent}'s parse threads.
 */
final class LineSender {

  private static final Logger log = LoggerFactory.getLogger(IngestAgent.class);
  private static final java.util.Set<String> PARSER_ERRORS_SAID = java.util.concurrent.ConcurrentHashMap.newKeySet();

  private final EventSink sink;
  private final String ingestHost;
  private final Clock clock;
  /** Set by the agent's options before it runs. */
  Duration maxAhead = EventTime.DEFAULT_MAX_AHEAD;
  boolean untimedFromFiles;
  IngestAgent.LineOutcomes outcomes = (line, outcome) -> { };

  LineSender(EventSink sink, String ingestHost, Clock clock) {
    this.sink = sink;
    this.ingestHost = ingestHost;
    this.clock = clock;
  }

  /** What a line's outcome sends: its events, or its rejected line (with a notice when it was a refusal); returns the events sent. */
  int send(Parsed parsed, TailedLine line, Instant ingestedAt, String sourceLabel, String source, List<Outgoing> out) {
    return send(parsed, line, ingestedAt, sourceLabel, source, out, true);
  }

  private int send(Parsed parsed, TailedLine line, Instant ingestedAt, String sourceLabel, String source,
      List<Outgoing> out, boolean whole) {
    int prepared = 0;
    if (parsed instanceof Parsed.Rejected r) {
      reject(out, line, line.text(), sourceLabel, r.code(), r.reason());
      unattributed(out, line, ingestedAt, sourceLabel, r.code(), source, r.at(), r.identity());
    } else if (parsed instanceof Parsed.Several several) {
      // each record of the line as a line of its own; a rejected one keeps the record, not the whole line
      for (Parsed.Part part : several.parts()) {
        if (part.outcome() instanceof Parsed.Rejected r) {
          reject(out, line, part.record() == null ? line.text() : part.record(), sourceLabel, r.code(), r.reason());
          unattributed(out, line, ingestedAt, sourceLabel, r.code(), source, r.at(), r.identity());
        } else {
          prepared += send(part.outcome(), line, ingestedAt, sourceLabel, source, out, false);
        }
      }
    } else if (parsed instanceof Parsed.Skipped s) {
      IngestMetrics.SKIPPED.labels(sourceLabel, s.reason()).inc();
    } else if (parsed instanceof Parsed.Events ev) {
      for (ViolationEvent e : ev.events()) {
        prepared += prepare(e, line, ingestedAt, sourceLabel, out) ? 1 : 0;
      }
    }
    if (whole) {
      outcomes.line(line, parsed);
    }
    return prepared;
  }

  /** What {@code parser} makes of one line of a file of context {@code ctx}; a parser's failure is the line's rejection. */
  Parsed outcome(LineParser parser, IngestAgent.FileContext ctx, String sourceLabel, TailedLine line, Instant ingestedAt) {
    if (line.binary()) {
      return Parsed.rejected(Rejection.BINARY, "not text: NUL bytes or mostly control characters");
    }
    if (ctx.format() == null || parser == null) {
      return line.text().isBlank() ? Parsed.skipped("blank") : Parsed.rejected(Rejection.UNPARSEABLE,
          "cannot tell this file's format from its name or first line: give its source a type");
    }
    SourceLine src = new SourceLine(line.file(), line.offset(), line.text(), ctx.agentId(), ctx.commandId(),
        ingestHost, ingestedAt, line.idName());
    try {
      return line.text().isBlank() ? parser.blank(src) : parser.parse(src);
    } catch (RuntimeException | StackOverflowError e) {
      // a parser's bug, met by one line: that line is kept with why, and every other line goes on
      if (PARSER_ERRORS_SAID.add(sourceLabel)) {
        log.error("the {} parser failed on {}:{} (later failures of it are only counted, code parser-error)",
            sourceLabel, Sanitize.text(line.file(), 300), line.offset(), e);
      }
      return Parsed.rejected(Rejection.PARSER_ERROR, "the " + sourceLabel + " parser failed on this line: "
          + e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + Sanitize.text(e.getMessage(), 200)));
    }
  }

  /**
   * The last steps before an event leaves ingest: its time settled, its command id checked, every
   * field made safe, its record written; or, when it cannot be, its line kept as rejected.
   */
  private boolean prepare(ViolationEvent parsed, TailedLine line, Instant now, String sourceLabel, List<Outgoing> out) {
    // when ingest read the line that made it: a refusal ended on a quiet file was read before now
    Instant ingestedAt = parsed.ingestedAt() != null ? parsed.ingestedAt() : now;
    boolean fromFile = untimedFromFiles && line.fileModifiedAt() != null;
    ViolationEvent e = EventTime.settle(parsed, ingestedAt, maxAhead, fromFile ? line.fileModifiedAt() : ingestedAt,
        fromFile ? ViolationEvent.TIME_FROM_FILE : ViolationEvent.TIME_FROM_INGEST, sourceLabel);
    // a wall that names no command says so, and its event has no command id: none is invented
    Optional<String> idProblem = Boolean.TRUE.equals(e.commandUnknown()) && e.commandId() == null ? Optional.empty()
        : CommandId.problem(e.commandId());
    if (idProblem.isPresent()) {
      Rejection code = Rejection.forCommandId(e.commandId());
      reject(out, line, line.text(), sourceLabel, code, idProblem.get());
      unattributed(out, line, ingestedAt, sourceLabel, code, e.source(), e.timeSource() == null ? e.observedAt() : null,
          null);
      return false;
    }
    if (e.identityConflict() != null) {
      countConflict(e.identityConflict(), sourceLabel);
    }
    try {
      out.add(sink.prepare(Sanitize.event(e)));
      return true;
    } catch (RuntimeException x) { // no field of it can cause this; should a bug, the line is kept
      reject(out, line, line.text(), sourceLabel, Rejection.UNPUBLISHABLE, "its event could not be written: "
          + Sanitize.text(String.valueOf(x.getMessage()), 200));
      return false;
    }
  }

  /** A line's events take the indexes from 0; its notice takes the last, so it never shares an id with them. */
  private static final int MAX_EVENT_INDEX = 0xffff;

  /** The rejections that refuse a refusal for whose it is (docs/TRUST.md): a parser had read the refusal itself. */
  private static final java.util.Set<Rejection> IDENTITY = java.util.EnumSet.of(Rejection.BAD_AGENT_ID,
      Rejection.MISSING_COMMAND_ID, Rejection.SHORT_COMMAND_ID, Rejection.BAD_COMMAND_ID, Rejection.UNMAPPED_IDENTITY);

  /**
   * A refusal rejected for its identity must still be seen (rule {@code ingest-rejects}): beside its
   * rejected line, a notice keyed by its directory, or by the wall's identity no agent is mapped to
   * ({@link ViolationEvent#unattributedCommandId}), which only that rule reads.
   */
  private void unattributed(List<Outgoing> out, TailedLine line, Instant ingestedAt, String sourceLabel, Rejection code,
      String source, Instant at, String identity) {
    if (!IDENTITY.contains(code)) {
      return;
    }
    int slash = line.file().indexOf('/');
    String directory = identity != null ? null : slash < 0 ? "" : line.file().substring(0, slash);
    ViolationEvent notice = ViolationEvent.builder()
        .eventId(EventIds.of(line.idName(), line.offset(), MAX_EVENT_INDEX))
        .commandId(ViolationEvent.unattributedCommandId(identity != null ? identity : directory))
        .source(source)
        .reason("a refusal was rejected (" + code.code() + "): it cannot be told whose it is")
        .observedAt(at).ingestedAt(ingestedAt)
        .origin(new ViolationEvent.Origin(line.file(), line.offset(), ingestHost))
        .unattributed(new ViolationEvent.Unattributed(code.code(), directory, identity))
        .build();
    // its time is the line's where the parser read one, else as for any line without one
    if (prepare(notice, line, ingestedAt, sourceLabel, out)) {
      IngestMetrics.UNATTRIBUTED.labels(sourceLabel).inc();
    }
  }

  private static void countConflict(ViolationEvent.IdentityClaim claim, String sourceLabel) {
    if (claim.agentId() != null) {
      IngestMetrics.IDENTITY_CONFLICTS.labels(sourceLabel, "agentId").inc();
    }
    if (claim.commandId() != null) {
      IngestMetrics.IDENTITY_CONFLICTS.labels(sourceLabel, "commandId").inc();
    }
  }

  private void reject(List<Outgoing> out, TailedLine line, String text, String sourceLabel, Rejection code,
      String reason) {
    IngestMetrics.REJECTED.labels(sourceLabel, code.code()).inc();
    out.add(new Outgoing.Rejected(new RejectedLine(line.file(), line.offset(), ingestHost, code.code(), reason,
        Redactor.safe(text, IngestAgent.MAX_REJECTED_LINE_CHARS), clock.instant())));
  }
}
