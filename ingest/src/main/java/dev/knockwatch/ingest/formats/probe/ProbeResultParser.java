package dev.knockwatch.ingest.formats.probe;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.HostClassifier;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Redactor;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.spi.Attribution;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.Rejection;
import dev.knockwatch.ingest.spi.SourceLine;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.Optional;

/**
 * Guard probe results, one JSON object a line ({@code <agentId>/<commandId>.probe.jsonl}), the
 * objects {@code probe guard --json} prints:
 * <pre>
 * {"probe":"plain-http","commandId":"…","expected":"403 blocked-by-allowlist","observed":"200 OK",
 *  "refused":false,"kind":"network","target":"example.com:80","timestamp":"…Z","agentId":"probe"}
 * </pre>
 * {@code probe}, {@code refused} (a boolean) and a command id (the line's or the file name's) are
 * required; {@code kind} ({@code network}, {@code filesystem}, {@code unix-socket}, {@code process}),
 * {@code target} (host:port, a URL, or a path), {@code expected}, {@code observed}, {@code command},
 * {@code timestamp} and {@code agentId} are optional. A refused probe is published too: the
 * timeline shows that the wall held.
 */
public final class ProbeResultParser implements LineParser {

  static final int MAX_NAME_CHARS = 128;
  static final int MAX_FIELD_CHARS = 1024;
  static final int MAX_COMMAND_CHARS = 2048;

  @Override
  public Parsed parse(SourceLine src) {
    JsonNode root;
    try {
      root = Json.MAPPER.readTree(src.text());
    } catch (JsonProcessingException e) {
      return Parsed.rejected(Rejection.UNPARSEABLE, "not a JSON object: " + Sanitize.text(e.getOriginalMessage(), 200));
    }
    if (root == null || !root.isObject()) {
      return Parsed.rejected(Rejection.UNPARSEABLE, "not a JSON object");
    }
    Optional<String> name = text(root, "probe");
    if (name.isEmpty()) {
      return Parsed.rejected(Rejection.UNPARSEABLE, "probe result has no \"probe\" name");
    }
    JsonNode refused = root.get("refused");
    if (refused == null || !refused.isBoolean()) {
      return Parsed.rejected(Rejection.UNPARSEABLE, "probe result has no \"refused\": true or false");
    }
    // docs/TRUST.md: the result's agentId and commandId are claims; the directory and file name decide
    Attribution.Result who = Attribution.of(src, text(root, "agentId").orElse(null), text(root, "commandId").orElse(null));
    if (who instanceof Attribution.Refused r) {
      return r.parsed();
    }
    Kind kind = null;
    Optional<String> kindText = text(root, "kind");
    if (kindText.isPresent()) {
      kind = kindOf(kindText.get());
      if (kind == null) {
        return Parsed.rejected(Rejection.UNPARSEABLE, "probe result kind \"" + Sanitize.text(kindText.get(), 40)
            + "\" is not one of network, filesystem, unix-socket, process");
      }
    }
    Instant at = null;
    Optional<String> timestamp = text(root, "timestamp");
    if (timestamp.isPresent()) {
      try {
        at = Instant.parse(timestamp.get());
      } catch (DateTimeParseException e) {
        at = SourceLine.UNREADABLE_TIME; // the result is kept, at the time ingest read it
      }
    }
    ViolationEvent.Builder event = ((Attribution.Attributed) who).applyTo(src.newEvent())
        .source(ProbeResultFormat.NAME)
        .kind(kind)
        .action(Sanitize.text(name.get(), MAX_NAME_CHARS))
        .observedAt(at)
        .commandText(text(root, "command").map(c -> Redactor.safe(c, MAX_COMMAND_CHARS)).orElse(null))
        .probe(new ViolationEvent.ProbeResult(Sanitize.text(name.get(), MAX_NAME_CHARS),
            text(root, "expected").map(v -> Sanitize.text(v, MAX_FIELD_CHARS)).orElse(null),
            text(root, "observed").map(v -> Redactor.safe(v, MAX_FIELD_CHARS)).orElse(null),
            refused.booleanValue()));
    text(root, "target").ifPresent(t -> {
      if (t.startsWith("/") || t.startsWith("~")) {
        event.path(Sanitize.text(t, MAX_FIELD_CHARS));
      } else {
        if (t.contains("://")) {
          event.url(Redactor.safe(t, MAX_FIELD_CHARS));
        }
        HostClassifier.target(t).ifPresent(hp -> event.host(Sanitize.text(hp.host(), MAX_FIELD_CHARS)).port(hp.port()));
      }
    });
    return Parsed.of(event.build());
  }

  private static Kind kindOf(String text) {
    return switch (text.toLowerCase(Locale.ROOT)) {
      case "network" -> Kind.NETWORK;
      case "filesystem" -> Kind.FILESYSTEM;
      case "unix-socket" -> Kind.UNIX_SOCKET;
      case "process" -> Kind.PROCESS;
      default -> null;
    };
  }

  private static Optional<String> text(JsonNode root, String field) {
    JsonNode v = root.get(field);
    return v == null || !v.isTextual() || v.asText().isEmpty() ? Optional.empty() : Optional.of(v.asText());
  }
}
