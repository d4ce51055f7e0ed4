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

  /** Each field's bit, to tell a field given twice (the mapper's answer then depends on the others). */
  private static final Map<String, Integer> EVENT_FIELDS = bits("schema", "eventId", "commandId", "agentId", "role",
      "source", "kind", "action", "host", "port", "method", "url", "path", "addressClass", "reason", "proxyError",
      "errno", "syscall", "pid", "observedAt", "ingestedAt", "timeSource", "commandText", "origin", "probe",
      "identityConflict");
  private static final Map<String, Integer> ORIGIN_FIELDS = bits("file", "offset", "ingestHost");
  private static final Map<String, Integer> PROBE_FIELDS = bits("name", "expected", "observed", "refused");
  private static final Map<String, Integer> CLAIM_FIELDS = bits("agentId", "commandId");

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
    String timeSource = null;
    String commandText = null;
    ViolationEvent.Origin origin = null;
    ViolationEvent.ProbeResult probe = null;
    ViolationEvent.IdentityClaim identityConflict = null;
    int seen = 0;
    for (JsonToken t = p.nextToken(); t != JsonToken.END_OBJECT; t = p.nextToken()) {
      String name = p.currentName();
      JsonToken v = p.nextToken();
      seen = once(seen, EVENT_FIELDS, name);
      switch (name) {
        case "schema" -> schema = integer(p, v);
        case "eventId" -> eventId = text(p, v);
        case "commandId" -> commandId = text(p, v);
        case "agentId" -> agentId = text(p, v);
        case "role" -> role = text(p, v);
        case "source" -> source = wire(SOURCES, text(p, v));
        case "kind" -> kind = wire(KINDS, text(p, v));
        case "action" -> action = text(p, v);
        case "host" -> host = text(p, v);
        case "port" -> port = v == JsonToken.VALUE_NULL ? null : integer(p, v);
        case "method" -> method = text(p, v);
        case "url" -> url = text(p, v);
        case "path" -> path = text(p, v);
        case "addressClass" -> addressClass = wire(ADDRESS_CLASSES, text(p, v));
        case "reason" -> reason = text(p, v);
        case "proxyError" -> proxyError = text(p, v);
        case "errno" -> errno = text(p, v);
        case "syscall" -> syscall = text(p, v);
        case "pid" -> pid = v == JsonToken.VALUE_NULL ? null : integer(p, v);
        case "observedAt" -> observedAt = instant(text(p, v));
        case "ingestedAt" -> ingestedAt = instant(text(p, v));
        case "timeSource" -> timeSource = text(p, v);
        case "commandText" -> commandText = text(p, v);
        case "origin" -> origin = v == JsonToken.VALUE_NULL ? null : origin(p, v);
        case "probe" -> probe = v == JsonToken.VALUE_NULL ? null : probe(p, v);
        case "identityConflict" -> identityConflict = v == JsonToken.VALUE_NULL ? null : claim(p, v);
        default -> p.skipChildren();
      }
    }
    return new ViolationEvent(schema, eventId, commandId, agentId, role, source, kind, action, host, port, method, url,
        path, addressClass, reason, proxyError, errno, syscall, pid, observedAt, ingestedAt, timeSource, commandText, origin, probe,
        identityConflict);
  }

  private static ViolationEvent.IdentityClaim claim(JsonParser p, JsonToken start) throws IOException, NotFast {
    if (start != JsonToken.START_OBJECT) {
      throw NOT_FAST;
    }
    String agentId = null;
    String commandId = null;
    int seen = 0;
    for (JsonToken t = p.nextToken(); t != JsonToken.END_OBJECT; t = p.nextToken()) {
      String name = p.currentName();
      JsonToken v = p.nextToken();
      seen = once(seen, CLAIM_FIELDS, name);
      switch (name) {
        case "agentId" -> agentId = text(p, v);
        case "commandId" -> commandId = text(p, v);
        default -> p.skipChildren();
      }
    }
    return new ViolationEvent.IdentityClaim(agentId, commandId);
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
      seen = once(seen, ORIGIN_FIELDS, name);
      switch (name) {
        case "file" -> file = text(p, v);
        case "offset" -> offset = wideInteger(p, v);
        case "ingestHost" -> ingestHost = text(p, v);
        default -> p.skipChildren();
      }
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
      seen = once(seen, PROBE_FIELDS, field);
      switch (field) {
        case "name" -> name = text(p, v);
        case "expected" -> expected = text(p, v);
        case "observed" -> observed = text(p, v);
        case "refused" -> {
          if (v != JsonToken.VALUE_TRUE && v != JsonToken.VALUE_FALSE) {
            throw NOT_FAST;
          }
          refused = v == JsonToken.VALUE_TRUE;
        }
        default -> p.skipChildren();
      }
    }
    return new ViolationEvent.ProbeResult(name, expected, observed, refused);
  }

  /** {@code seen} with {@code name}'s bit set; a known field already seen is not fast. */
  private static int once(int seen, Map<String, Integer> fields, String name) throws NotFast {
    Integer bit = fields.get(name);
    if (bit == null) {
      return seen;
    }
    if ((seen & bit) != 0) {
      throw NOT_FAST;
    }
    return seen | bit;
  }

  private static Map<String, Integer> bits(String... names) {
    Map<String, Integer> m = new HashMap<>();
    for (int i = 0; i < names.length; i++) {
      m.put(names[i], 1 << i);
    }
    return Map.copyOf(m);
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
