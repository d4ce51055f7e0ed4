package dev.knockwatch.ingest.srt;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.knockwatch.events.CommandId;
import dev.knockwatch.events.CommandId.InvalidCommandIdException;
import dev.knockwatch.events.HostClassifier;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Redactor;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.Source;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.LineParser;
import dev.knockwatch.ingest.Parsed;
import dev.knockwatch.ingest.Rejection;
import dev.knockwatch.ingest.SourceLine;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Base64;
import java.util.Optional;

/**
 * srt violation records: one JSON object a line, as the srt bridge writes them.
 * <pre>
 * {"line":"deny network-outbound example.com:80 (host is not on the allow list)",
 *  "encodedCommand":"eGhmSHl0bVhMLUw2UnNZdzJDclNqQQ==","command":"curl …","timestamp":"…Z",
 *  "commandId":"…","agentId":"…"}
 * </pre>
 * The commandId is the record's own, else the decoded {@code encodedCommand} (srt encodes the
 * commandId when one was given, else the command text — which is then rejected as no id), else
 * the file name. The agentId is the record's own, else the directory name.
 */
public final class SrtViolationParser implements LineParser {

  public static final String FILE_SUFFIX = ".violations.jsonl";

  static final int MAX_COMMAND_CHARS = 2048;
  static final int MAX_AGENT_CHARS = SourceLine.MAX_AGENT_CHARS;
  static final int MAX_FIELD_CHARS = 1024;
  static final int MAX_PATH_CHARS = 4096;

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
    Optional<SrtLine> parsedLine = SrtLine.parse(record.line);
    if (parsedLine.isEmpty()) {
      return Parsed.rejected(Rejection.UNPARSEABLE, "not an srt deny line: \""
          + Sanitize.text(record.line, 200) + "\"");
    }
    SrtLine line = parsedLine.get();

    String commandId;
    try {
      commandId = commandIdOf(record, src);
    } catch (InvalidCommandIdException e) {
      return Parsed.rejected(Rejection.BAD_COMMAND_ID, e.getMessage());
    }
    Optional<String> idProblem = CommandId.problem(commandId);
    if (idProblem.isPresent()) {
      return Parsed.rejected(Rejection.forCommandId(commandId), idProblem.get());
    }

    String host = HostClassifier.canonical(line.host());
    ViolationEvent event = src.newEvent()
        .commandId(commandId)
        .agentId(clean(text(record, "agentId").orElse(src.agentIdFromPath()), MAX_AGENT_CHARS))
        .source(Source.SRT_VIOLATION)
        .kind(line.kind())
        .action(line.action())
        .host(host)
        .port(line.port())
        .method(line.method())
        .url(line.url() == null ? null : clean(Redactor.redact(line.url()), MAX_FIELD_CHARS))
        .path(clean(line.path(), MAX_PATH_CHARS))
        .addressClass(line.addressClass() != null ? line.addressClass()
            : HostClassifier.classify(host).orElse(null))
        .reason(clean(line.reason(), MAX_FIELD_CHARS))
        .observedAt(timestamp(record).orElse(src.ingestedAt()))
        .commandText(text(record, "command")
            .map(c -> clean(Redactor.redact(c), MAX_COMMAND_CHARS)).orElse(null))
        .build();
    return Parsed.of(event);
  }

  /**
   * The string fields of one record, read with Jackson's streaming parser (no tree): the hot
   * path of ingest. Values that are not strings count as absent, as do empty strings.
   */
  private static final class Record {
    String line;
    String encodedCommand;
    String command;
    String timestamp;
    String commandId;
    String agentId;

    /** Null when the text is JSON but not an object. */
    static Record read(String text) throws IOException {
      try (JsonParser p = Json.MAPPER.getFactory().createParser(text)) {
        if (p.nextToken() != JsonToken.START_OBJECT) {
          return null;
        }
        Record r = new Record();
        while (p.nextToken() == JsonToken.FIELD_NAME) {
          String name = p.currentName();
          if (p.nextToken() != JsonToken.VALUE_STRING) {
            p.skipChildren();
            continue;
          }
          String v = p.getText();
          switch (name) {
            case "line" -> r.line = v;
            case "encodedCommand" -> r.encodedCommand = v;
            case "command" -> r.command = v;
            case "timestamp" -> r.timestamp = v;
            case "commandId" -> r.commandId = v;
            case "agentId" -> r.agentId = v;
            default -> { }
          }
        }
        return r;
      }
    }

    Optional<String> get(String field) {
      String v = switch (field) {
        case "encodedCommand" -> encodedCommand;
        case "command" -> command;
        case "timestamp" -> timestamp;
        case "commandId" -> commandId;
        case "agentId" -> agentId;
        default -> line;
      };
      return v == null || v.isEmpty() ? Optional.empty() : Optional.of(v);
    }
  }

  private static String commandIdOf(Record record, SourceLine src) {
    Optional<String> explicit = text(record, "commandId");
    if (explicit.isPresent()) {
      return explicit.get();
    }
    Optional<String> encoded = text(record, "encodedCommand");
    if (encoded.isPresent()) {
      byte[] raw;
      try {
        raw = Base64.getDecoder().decode(encoded.get());
      } catch (IllegalArgumentException e) {
        throw new InvalidCommandIdException("encodedCommand is not base64");
      }
      String decoded = new String(raw, StandardCharsets.UTF_8);
      // srt encodes the command text when it was given no id: that is no command id.
      CommandId.problem(decoded).ifPresent(problem -> {
        throw new InvalidCommandIdException("encodedCommand decodes to no command id (" + problem + ")");
      });
      return decoded;
    }
    if (src.commandIdFromPath() != null) {
      return src.commandIdFromPath();
    }
    return null;
  }

  private static Optional<Instant> timestamp(Record record) {
    try {
      return text(record, "timestamp").map(SrtViolationParser::instant);
    } catch (DateTimeParseException e) {
      return Optional.empty();
    }
  }

  /** srt writes {@code 2026-11-29T18:45:32.887Z} (JavaScript's toISOString): read that shape directly, anything else with Instant.parse. */
  static Instant instant(String t) {
    if (t.length() == 24 && t.charAt(4) == '-' && t.charAt(7) == '-' && t.charAt(10) == 'T' && t.charAt(13) == ':'
        && t.charAt(16) == ':' && t.charAt(19) == '.' && t.charAt(23) == 'Z') {
      int[] f = {digits(t, 0, 4), digits(t, 5, 2), digits(t, 8, 2), digits(t, 11, 2), digits(t, 14, 2), digits(t, 17, 2),
          digits(t, 20, 3)};
      boolean ok = true;
      for (int v : f) {
        ok &= v >= 0;
      }
      if (ok && f[1] >= 1 && f[1] <= 12 && f[2] >= 1 && f[2] <= 31 && f[3] < 24 && f[4] < 60 && f[5] < 60) {
        try {
          long days = java.time.LocalDate.of(f[0], f[1], f[2]).toEpochDay();
          return Instant.ofEpochMilli(((days * 24 + f[3]) * 60 + f[4]) * 60_000L + f[5] * 1000L + f[6]);
        } catch (java.time.DateTimeException e) {
          throw new DateTimeParseException("not a date", t, 0);
        }
      }
    }
    return Instant.parse(t);
  }

  private static int digits(String s, int from, int n) {
    int v = 0;
    for (int i = from; i < from + n; i++) {
      char c = s.charAt(i);
      if (c < '0' || c > '9') {
        return -1;
      }
      v = v * 10 + (c - '0');
    }
    return v;
  }

  private static Optional<String> text(Record record, String field) {
    return record.get(field);
  }


  private static String clean(String s, int max) {
    return Sanitize.text(s, max);
  }
}
