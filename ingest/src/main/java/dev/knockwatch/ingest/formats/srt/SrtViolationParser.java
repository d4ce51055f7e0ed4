package dev.knockwatch.ingest.formats.srt;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.knockwatch.events.AddressClass;
import dev.knockwatch.events.CommandId;
import dev.knockwatch.events.HostClassifier;
import dev.knockwatch.events.IsoInstant;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Redactor;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.spi.Attribution;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.Rejection;
import dev.knockwatch.ingest.spi.SourceLine;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Base64;
import java.util.List;
import java.util.Optional;

/**
 * srt violation records: one JSON object a line, as the srt bridge writes them, on Linux and on
 * macOS alike (there srt's {@code line} may be Seatbelt's report: {@link SrtLine#seatbelt}).
 * <pre>
 * {"line":"deny network-outbound example.com:80 (host is not on the allow list)",
 *  "encodedCommand":"eGhmSHl0bVhMLUw2UnNZdzJDclNqQQ==","command":"curl …","timestamp":"…Z",
 *  "commandId":"…","agentId":"…"}
 * </pre>
 * The agentId and commandId are the log layout's (the directory and the file name the bridge
 * writes); the record's {@code agentId}, {@code commandId} and decoded {@code encodedCommand} are
 * claims, used only where the layout names no command ({@link Attribution}, docs/TRUST.md).
 */
public final class SrtViolationParser implements LineParser {

  static final int MAX_COMMAND_CHARS = 2048;
  static final int MAX_FIELD_CHARS = 1024;
  static final int MAX_PATH_CHARS = 4096;

  /**
   * The last command text and what it became: every record of a command carries the same text,
   * and a parser reads one file (one command, as the srt bridge writes them).
   */
  private String lastCommand;
  private String lastCommandText;

  /**
   * The last {@link #RECENT_DENIALS} distinct deny lines and what each became: a command that
   * does not take "no" writes the same few lines again and again. Each is a plain function of
   * its text, so a line met again reads as it did the first time.
   */
  static final int RECENT_DENIALS = 8;
  private final String[] recentLines = new String[RECENT_DENIALS];
  @SuppressWarnings("unchecked")
  private final Optional<Denial>[] recentDenials = new Optional[RECENT_DENIALS];
  private int nextRecent;

  /** A deny line's parts, its canonical host and its address class. */
  private record Denial(SrtLine line, String host, AddressClass addressClass) {}

  @Override
  public Parsed parse(SourceLine src) {
    Record record;
    try {
      record = Record.read(src.text());
    } catch (JsonProcessingException e) {
      return Parsed.rejected(Rejection.UNPARSEABLE, "not a JSON object: "
          + Sanitize.text(e.getOriginalMessage(), 200));
    } catch (IOException e) {
      return Parsed.rejected(Rejection.UNPARSEABLE, "not a JSON object");
    }
    if (record == null) {
      return Parsed.rejected(Rejection.UNPARSEABLE, "not a JSON object");
    }
    if (record.line == null) {
      return Parsed.rejected(Rejection.UNPARSEABLE, "srt violation record has no \"line\" text");
    }
    Optional<Denial> denial = denial(record.line);
    if (denial.isEmpty()) {
      return Parsed.rejected(Rejection.UNPARSEABLE, "not an srt deny line: \""
          + Sanitize.text(record.line, 200) + "\"");
    }
    SrtLine line = denial.get().line();

    // docs/TRUST.md: the record's agentId, commandId and encodedCommand are claims; the layout decides
    Attribution.Result who = Attribution.of(src, text(record, "agentId").orElse(null), claimedCommandId(record));
    if (who instanceof Attribution.Refused r) {
      Optional<String> why = r.code() == Rejection.MISSING_COMMAND_ID ? encodedCommandProblem(record) : Optional.empty();
      // the record's time goes with it: the notice of a refusal rejected for whose it is is placed by it
      return why.isPresent() ? Parsed.rejected(Rejection.BAD_COMMAND_ID, why.get(), timestamp(record))
          : Parsed.rejected(r.code(), r.reason(), timestamp(record));
    }

    ViolationEvent event = ((Attribution.Attributed) who).applyTo(src.newEvent())
        .source(SrtFormat.NAME)
        .kind(line.kind())
        .action(line.action())
        .host(denial.get().host())
        .port(line.port())
        .method(line.method())
        .url(line.url() == null ? null : Redactor.safe(line.url(), MAX_FIELD_CHARS))
        .path(clean(line.path(), MAX_PATH_CHARS))
        .addressClass(denial.get().addressClass())
        .reason(clean(line.reason(), MAX_FIELD_CHARS))
        .pid(line.pid())
        .observedAt(timestamp(record))
        .commandText(text(record, "command").map(this::commandText).orElse(null))
        // the harness's session and task (the bridge's --session, --task): what rules count per task by
        .sessionId(Attribution.grainId(text(record, "sessionId").orElse(null)))
        .taskId(Attribution.grainId(text(record, "taskId").orElse(null)))
        .build();
    return Parsed.of(event);
  }

  /**
   * The string fields of one record. Values that are not strings count as absent, as do empty
   * strings; of a field given twice the last counts. Read with Jackson's streaming parser: a
   * one-pass scan of its own was less than twice as fast, the bar a second implementation of a
   * format must clear (docs/PERFORMANCE.md "Fast paths").
   */
  static final class Record {
    static final List<String> FIELDS = List.of("line", "encodedCommand", "command", "timestamp", "commandId", "agentId",
        "sessionId", "taskId");

    String sessionId;
    String taskId;
    String line;
    String encodedCommand;
    String command;
    String timestamp;
    String commandId;
    String agentId;

    /**
     * The record, or null when the text is JSON but not an object. A record that breaks off after
     * its {@code line} (a line past the bound, kept as its start and end; a writer that died
     * mid-line) keeps the fields read before the break: the refusal is not lost to what follows it.
     */
    static Record read(String text) throws IOException {
      try (JsonParser p = Json.MAPPER.getFactory().createParser(text)) {
        if (p.nextToken() != JsonToken.START_OBJECT) {
          return null;
        }
        Record r = new Record();
        try {
          while (p.nextToken() == JsonToken.FIELD_NAME) {
            String name = p.currentName();
            if (p.nextToken() != JsonToken.VALUE_STRING) {
              p.skipChildren();
              continue;
            }
            r.set(name, p.getText());
          }
        } catch (JsonProcessingException e) {
          if (r.line == null) {
            throw e;
          }
        }
        return r;
      }
    }

    private void set(String name, String v) {
      set(FIELDS.indexOf(name), v);
    }

    /** Sets field {@code i} of {@link #FIELDS}; -1 is a field this parser does not read. */
    private void set(int i, String v) {
      switch (i) {
        case 0 -> line = v;
        case 1 -> encodedCommand = v;
        case 2 -> command = v;
        case 3 -> timestamp = v;
        case 4 -> commandId = v;
        case 5 -> agentId = v;
        case 6 -> sessionId = v;
        case 7 -> taskId = v;
        default -> { }
      }
    }

    Optional<String> get(String field) {
      String v = switch (field) {
        case "encodedCommand" -> encodedCommand;
        case "command" -> command;
        case "timestamp" -> timestamp;
        case "commandId" -> commandId;
        case "agentId" -> agentId;
        case "sessionId" -> sessionId;
        case "taskId" -> taskId;
        default -> line;
      };
      return v == null || v.isEmpty() ? Optional.empty() : Optional.of(v);
    }
  }

  /** The deny line's parts, from the recent ones when it is one of them; empty when it is no deny line. */
  private Optional<Denial> denial(String text) {
    for (int i = 0; i < RECENT_DENIALS; i++) {
      if (text.equals(recentLines[i])) {
        return recentDenials[i];
      }
    }
    // srt's own lines (its proxy's, Linux's), else what srt on macOS keeps of Seatbelt's report
    Optional<Denial> denial = SrtLine.parse(text).or(() -> SrtLine.seatbelt(text)).map(line -> {
      String host = HostClassifier.canonical(line.host());
      return new Denial(line, host, line.addressClass() != null ? line.addressClass()
          : HostClassifier.classify(host).orElse(null));
    });
    recentLines[nextRecent] = text;
    recentDenials[nextRecent] = denial;
    nextRecent = (nextRecent + 1) % RECENT_DENIALS;
    return denial;
  }

  /** Redacted, cleaned and bounded. */
  private String commandText(String command) {
    if (!command.equals(lastCommand)) {
      lastCommandText = Redactor.safe(command, MAX_COMMAND_CHARS);
      lastCommand = command;
    }
    return lastCommandText;
  }

  /**
   * The command the record names: its {@code commandId}, else its {@code encodedCommand} decoded
   * when that is an id (srt encodes the command text when it was given no id: that names none).
   */
  private static String claimedCommandId(Record record) {
    Optional<String> explicit = text(record, "commandId");
    if (explicit.isPresent()) {
      return explicit.get();
    }
    return text(record, "encodedCommand").map(SrtViolationParser::decode)
        .filter(CommandId::isValid).orElse(null);
  }

  /** Why the record's {@code encodedCommand} names no command; empty when it has none or names one. */
  private static Optional<String> encodedCommandProblem(Record record) {
    return text(record, "encodedCommand").map(encoded -> {
      String decoded = decode(encoded);
      return decoded == null ? "encodedCommand is not base64"
          : CommandId.problem(decoded).map(p -> "encodedCommand decodes to no command id (" + p + ")").orElse(null);
    });
  }

  /** The base64 text decoded as UTF-8; null when it is not base64. */
  private static String decode(String base64) {
    try {
      return new String(Base64.getDecoder().decode(base64), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  /** The record's time; null when it has none, {@link SourceLine#UNREADABLE_TIME} when it is not an ISO-8601 instant. */
  private static Instant timestamp(Record record) {
    Optional<String> t = text(record, "timestamp");
    try {
      return t.map(IsoInstant::parse).orElse(null); // srt writes toISOString()'s shape, read directly
    } catch (DateTimeParseException e) {
      return SourceLine.UNREADABLE_TIME;
    }
  }

  private static Optional<String> text(Record record, String field) {
    return record.get(field);
  }


  private static String clean(String s, int max) {
    return Sanitize.text(s, max);
  }
}
