package dev.knockwatch.events;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Reads a {@link ViolationEvent} as {@link Json#MAPPER} reads it, with Jackson's streaming
 * parser instead of its bean deserializer. Detection reads every event it counts, so this is on
 * its hot path; a test holds it to the mapper's values.
 *
 * <p>The fast path takes the shapes {@link EventWriter} writes: each field once, strings as
 * strings (or null), numbers as integers, enums by their wire names, instants as ISO-8601 text;
 * unknown fields are skipped, as the mapper skips them. Anything else (a port written as a
 * string, an unknown source, a field twice, malformed JSON) is read again by the mapper, so the
 * value, or the error, is the mapper's.
 */
public final class EventReader {

  /** Not a shape the fast path takes: the mapper reads the event. No stack trace: it is no error. */
  private static final class NotFast extends Exception {
    NotFast() {
      super(null, null, false, false);
    }
  }

  private static final NotFast NOT_FAST = new NotFast();

  private static final Map<String, Source> SOURCES = byWireName(Source.values());
  private static final Map<String, Kind> KINDS = byWireName(Kind.values());
  private static final Map<String, AddressClass> ADDRESS_CLASSES = byWireName(AddressClass.values());

  private EventReader() {}

  public static ViolationEvent read(byte[] json) throws IOException {
    ViolationEvent e = fast(json);
    return e != null ? e : Json.MAPPER.readValue(json, ViolationEvent.class);
  }

  /** The event, when {@code json} has a shape the fast path takes; else null. */
  static ViolationEvent fast(byte[] json) {
    try (JsonParser p = Json.MAPPER.getFactory().createParser(json)) {
      return event(p);
    } catch (NotFast | IOException e) {
      return null;
    }
  }

  private static ViolationEvent event(JsonParser p) throws IOException, NotFast {
    if (p.nextToken() != JsonToken.START_OBJECT) {
      throw NOT_FAST;
    }
    int schema = 0;
    String eventId = null;
    String commandId = null;
    String agentId = null;
    String role = null;
    Source source = null;
    Kind kind = null;
    String action = null;
    String host = null;
    Integer port = null;
    String method = null;
    String url = null;
    String path = null;
    AddressClass addressClass = null;
    String reason = null;
    String proxyError = null;
    String errno = null;
    String syscall = null;
    Integer pid = null;
    Instant observedAt = null;
    Instant ingestedAt = null;
    String commandText = null;
    ViolationEvent.Origin origin = null;
    ViolationEvent.ProbeResult probe = null;
    int seen = 0;
    for (JsonToken t = p.nextToken(); t != JsonToken.END_OBJECT; t = p.nextToken()) {
      String name = p.currentName();
      JsonToken v = p.nextToken();
      int bit = switch (name) {
        case "schema" -> {
          schema = integer(p, v);
          yield 1;
        }
        case "eventId" -> {
          eventId = text(p, v);
          yield 1 << 1;
        }
        case "commandId" -> {
          commandId = text(p, v);
          yield 1 << 2;
        }
        case "agentId" -> {
          agentId = text(p, v);
          yield 1 << 3;
        }
        case "role" -> {
          role = text(p, v);
          yield 1 << 4;
        }
        case "source" -> {
          source = wire(SOURCES, text(p, v));
          yield 1 << 5;
        }
        case "kind" -> {
          kind = wire(KINDS, text(p, v));
          yield 1 << 6;
        }
        case "action" -> {
          action = text(p, v);
          yield 1 << 7;
        }
        case "host" -> {
          host = text(p, v);
          yield 1 << 8;
        }
        case "port" -> {
          port = v == JsonToken.VALUE_NULL ? null : integer(p, v);
          yield 1 << 9;
        }
        case "method" -> {
          method = text(p, v);
          yield 1 << 10;
        }
        case "url" -> {
          url = text(p, v);
          yield 1 << 11;
        }
        case "path" -> {
          path = text(p, v);
          yield 1 << 12;
        }
        case "addressClass" -> {
          addressClass = wire(ADDRESS_CLASSES, text(p, v));
          yield 1 << 13;
        }
        case "reason" -> {
          reason = text(p, v);
          yield 1 << 14;
        }
        case "proxyError" -> {
          proxyError = text(p, v);
          yield 1 << 15;
        }
        case "errno" -> {
          errno = text(p, v);
          yield 1 << 16;
        }
        case "syscall" -> {
          syscall = text(p, v);
          yield 1 << 17;
        }
        case "pid" -> {
          pid = v == JsonToken.VALUE_NULL ? null : integer(p, v);
          yield 1 << 18;
        }
        case "observedAt" -> {
          observedAt = instant(text(p, v));
          yield 1 << 19;
        }
        case "ingestedAt" -> {
          ingestedAt = instant(text(p, v));
          yield 1 << 20;
        }
        case "commandText" -> {
          commandText = text(p, v);
          yield 1 << 21;
        }
        case "origin" -> {
          origin = v == JsonToken.VALUE_NULL ? null : origin(p, v);
          yield 1 << 22;
        }
        case "probe" -> {
          probe = v == JsonToken.VALUE_NULL ? null : probe(p, v);
          yield 1 << 23;
        }
        default -> {
          p.skipChildren();
          yield 0;
        }
      };
      if ((seen & bit) != 0) {
        throw NOT_FAST; // a field twice
      }
      seen |= bit;
    }
    return new ViolationEvent(schema, eventId, commandId, agentId, role, source, kind, action, host, port, method, url,
        path, addressClass, reason, proxyError, errno, syscall, pid, observedAt, ingestedAt, commandText, origin, probe);
  }

  private static ViolationEvent.Origin origin(JsonParser p, JsonToken start) throws IOException, NotFast {
    if (start != JsonToken.START_OBJECT) {
      throw NOT_FAST;
    }
    String file = null;
    long offset = 0;
    String ingestHost = null;
    int seen = 0;
    for (JsonToken t = p.nextToken(); t != JsonToken.END_OBJECT; t = p.nextToken()) {
      String name = p.currentName();
      JsonToken v = p.nextToken();
      int bit = switch (name) {
        case "file" -> {
          file = text(p, v);
          yield 1;
        }
        case "offset" -> {
          offset = wideInteger(p, v);
          yield 2;
        }
        case "ingestHost" -> {
          ingestHost = text(p, v);
          yield 4;
        }
        default -> {
          p.skipChildren();
          yield 0;
        }
      };
      if ((seen & bit) != 0) {
        throw NOT_FAST;
      }
      seen |= bit;
    }
    return new ViolationEvent.Origin(file, offset, ingestHost);
  }

  private static ViolationEvent.ProbeResult probe(JsonParser p, JsonToken start) throws IOException, NotFast {
    if (start != JsonToken.START_OBJECT) {
      throw NOT_FAST;
    }
    String name = null;
    String expected = null;
    String observed = null;
    boolean refused = false;
    int seen = 0;
    for (JsonToken t = p.nextToken(); t != JsonToken.END_OBJECT; t = p.nextToken()) {
      String field = p.currentName();
      JsonToken v = p.nextToken();
      int bit = switch (field) {
        case "name" -> {
          name = text(p, v);
          yield 1;
        }
        case "expected" -> {
          expected = text(p, v);
          yield 2;
        }
        case "observed" -> {
          observed = text(p, v);
          yield 4;
        }
        case "refused" -> {
          if (v != JsonToken.VALUE_TRUE && v != JsonToken.VALUE_FALSE) {
            throw NOT_FAST;
          }
          refused = v == JsonToken.VALUE_TRUE;
          yield 8;
        }
        default -> {
          p.skipChildren();
          yield 0;
        }
      };
      if ((seen & bit) != 0) {
        throw NOT_FAST;
      }
      seen |= bit;
    }
    return new ViolationEvent.ProbeResult(name, expected, observed, refused);
  }

  private static String text(JsonParser p, JsonToken v) throws IOException, NotFast {
    if (v == JsonToken.VALUE_STRING) {
      return p.getText();
    }
    if (v == JsonToken.VALUE_NULL) {
      return null;
    }
    throw NOT_FAST;
  }

  /** An integer that fits an int; any other value is not fast. */
  private static int integer(JsonParser p, JsonToken v) throws IOException, NotFast {
    if (v == JsonToken.VALUE_NUMBER_INT && p.getNumberType() == JsonParser.NumberType.INT) {
      return p.getIntValue();
    }
    throw NOT_FAST;
  }

  /** An integer that fits a long; any other value is not fast. */
  private static long wideInteger(JsonParser p, JsonToken v) throws IOException, NotFast {
    if (v == JsonToken.VALUE_NUMBER_INT && p.getNumberType() != JsonParser.NumberType.BIG_INTEGER) {
      return p.getLongValue();
    }
    throw NOT_FAST;
  }

  private static Instant instant(String text) throws NotFast {
    if (text == null) {
      return null;
    }
    try {
      return IsoInstant.parse(text.strip());
    } catch (DateTimeParseException e) {
      throw NOT_FAST;
    }
  }

  private static <E> E wire(Map<String, E> values, String name) throws NotFast {
    if (name == null) {
      return null;
    }
    E e = values.get(name);
    if (e == null) {
      throw NOT_FAST;
    }
    return e;
  }

  /** Each value by its wire name, as {@link EventWriter} writes it ({@code SRT_VIOLATION}: {@code srt-violation}). */
  private static <E extends Enum<E>> Map<String, E> byWireName(E[] values) {
    Map<String, E> m = new HashMap<>();
    for (E e : values) {
      m.put(e.name().toLowerCase(Locale.ROOT).replace('_', '-'), e);
    }
    return Map.copyOf(m);
  }
}
