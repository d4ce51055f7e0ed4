package dev.knockwatch.events;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.core.io.SerializedString;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import java.util.Locale;

/**
 * Writes a {@link ViolationEvent} as the bytes {@link Json#MAPPER} writes for it (same fields,
 * same order, absent fields left out), through Jackson's streaming generator: no serializer
 * lookup, no property introspection. Ingest writes one event per line it reads, so this is on its
 * hot path; a test holds it to the mapper's output.
 *
 * <p>Field names and enum values are encoded once. The values that repeat from one event to the
 * next (a command's id, agent, command text and file are the same for each of its refusals) are
 * encoded once per run of equal values: each thread keeps the last value of each such field with
 * its JSON bytes.
 */
public final class EventWriter {

  private static final SerializedString SCHEMA = new SerializedString("schema");
  private static final SerializedString EVENT_ID = new SerializedString("eventId");
  private static final SerializedString COMMAND_ID = new SerializedString("commandId");
  private static final SerializedString AGENT_ID = new SerializedString("agentId");
  private static final SerializedString ROLE = new SerializedString("role");
  private static final SerializedString SOURCE = new SerializedString("source");
  private static final SerializedString KIND = new SerializedString("kind");
  private static final SerializedString ACTION = new SerializedString("action");
  private static final SerializedString HOST = new SerializedString("host");
  private static final SerializedString PORT = new SerializedString("port");
  private static final SerializedString METHOD = new SerializedString("method");
  private static final SerializedString URL = new SerializedString("url");
  private static final SerializedString PATH = new SerializedString("path");
  private static final SerializedString ADDRESS_CLASS = new SerializedString("addressClass");
  private static final SerializedString REASON = new SerializedString("reason");
  private static final SerializedString PROXY_ERROR = new SerializedString("proxyError");
  private static final SerializedString ERRNO = new SerializedString("errno");
  private static final SerializedString SYSCALL = new SerializedString("syscall");
  private static final SerializedString PID = new SerializedString("pid");
  private static final SerializedString OBSERVED_AT = new SerializedString("observedAt");
  private static final SerializedString INGESTED_AT = new SerializedString("ingestedAt");
  private static final SerializedString COMMAND_TEXT = new SerializedString("commandText");
  private static final SerializedString ORIGIN = new SerializedString("origin");
  private static final SerializedString FILE = new SerializedString("file");
  private static final SerializedString OFFSET = new SerializedString("offset");
  private static final SerializedString INGEST_HOST = new SerializedString("ingestHost");
  private static final SerializedString PROBE = new SerializedString("probe");
  private static final SerializedString NAME = new SerializedString("name");
  private static final SerializedString EXPECTED = new SerializedString("expected");
  private static final SerializedString OBSERVED = new SerializedString("observed");
  private static final SerializedString REFUSED = new SerializedString("refused");

  private static final SerializedString[] SOURCES = wireNames(Source.values());
  private static final SerializedString[] KINDS = wireNames(Kind.values());
  private static final SerializedString[] ADDRESS_CLASSES = wireNames(AddressClass.values());

  /** The fields whose last value each thread keeps encoded. */
  private enum Repeated { COMMAND_ID, AGENT_ID, ROLE, ACTION, HOST, REASON, PROXY_ERROR, COMMAND_TEXT, FILE, INGEST_HOST }

  private static final ThreadLocal<Last> LAST = ThreadLocal.withInitial(Last::new);

  private static final class Last {
    final String[] raw = new String[Repeated.values().length];
    final SerializedString[] encoded = new SerializedString[Repeated.values().length];

    SerializableString of(Repeated field, String value) {
      int i = field.ordinal();
      if (!value.equals(raw[i])) {
        raw[i] = value;
        encoded[i] = new SerializedString(value);
      }
      return encoded[i];
    }
  }

  private EventWriter() {}

  public static byte[] toBytes(ViolationEvent e) {
    ByteArrayBuilder out = new ByteArrayBuilder(640);
    try (JsonGenerator g = Json.MAPPER.getFactory().createGenerator(out, JsonEncoding.UTF8)) {
      write(g, e, LAST.get());
    } catch (IOException ex) {
      throw new UncheckedIOException(ex);
    }
    return out.toByteArray();
  }

  private static void write(JsonGenerator g, ViolationEvent e, Last last) throws IOException {
    g.writeStartObject();
    g.writeFieldName(SCHEMA);
    g.writeNumber(e.schema());
    string(g, EVENT_ID, e.eventId());
    string(g, COMMAND_ID, e.commandId(), last, Repeated.COMMAND_ID);
    string(g, AGENT_ID, e.agentId(), last, Repeated.AGENT_ID);
    string(g, ROLE, e.role(), last, Repeated.ROLE);
    wire(g, SOURCE, SOURCES, e.source());
    wire(g, KIND, KINDS, e.kind());
    string(g, ACTION, e.action(), last, Repeated.ACTION);
    string(g, HOST, e.host(), last, Repeated.HOST);
    number(g, PORT, e.port());
    string(g, METHOD, e.method());
    string(g, URL, e.url());
    string(g, PATH, e.path());
    wire(g, ADDRESS_CLASS, ADDRESS_CLASSES, e.addressClass());
    string(g, REASON, e.reason(), last, Repeated.REASON);
    string(g, PROXY_ERROR, e.proxyError(), last, Repeated.PROXY_ERROR);
    string(g, ERRNO, e.errno());
    string(g, SYSCALL, e.syscall());
    number(g, PID, e.pid());
    instant(g, OBSERVED_AT, e.observedAt());
    instant(g, INGESTED_AT, e.ingestedAt());
    string(g, COMMAND_TEXT, e.commandText(), last, Repeated.COMMAND_TEXT);
    if (e.origin() != null) {
      g.writeFieldName(ORIGIN);
      g.writeStartObject();
      string(g, FILE, e.origin().file(), last, Repeated.FILE);
      g.writeFieldName(OFFSET);
      g.writeNumber(e.origin().offset());
      string(g, INGEST_HOST, e.origin().ingestHost(), last, Repeated.INGEST_HOST);
      g.writeEndObject();
    }
    if (e.probe() != null) {
      g.writeFieldName(PROBE);
      g.writeStartObject();
      string(g, NAME, e.probe().name());
      string(g, EXPECTED, e.probe().expected());
      string(g, OBSERVED, e.probe().observed());
      g.writeFieldName(REFUSED);
      g.writeBoolean(e.probe().refused());
      g.writeEndObject();
    }
    g.writeEndObject();
  }

  private static void string(JsonGenerator g, SerializableString name, String value) throws IOException {
    if (value != null) {
      g.writeFieldName(name);
      g.writeString(value);
    }
  }

  private static void string(JsonGenerator g, SerializableString name, String value, Last last, Repeated field)
      throws IOException {
    if (value != null) {
      g.writeFieldName(name);
      g.writeString(last.of(field, value));
    }
  }

  private static void number(JsonGenerator g, SerializableString name, Integer value) throws IOException {
    if (value != null) {
      g.writeFieldName(name);
      g.writeNumber(value);
    }
  }

  private static void instant(JsonGenerator g, SerializableString name, Instant value) throws IOException {
    if (value != null) {
      g.writeFieldName(name);
      g.writeString(IsoInstant.format(value));
    }
  }

  private static void wire(JsonGenerator g, SerializableString name, SerializedString[] names, Enum<?> value)
      throws IOException {
    if (value != null) {
      g.writeFieldName(name);
      g.writeString(names[value.ordinal()]);
    }
  }

  /** The enums' wire names: {@code SRT_VIOLATION} is {@code srt-violation}. */
  private static SerializedString[] wireNames(Enum<?>[] values) {
    SerializedString[] out = new SerializedString[values.length];
    for (Enum<?> v : values) {
      out[v.ordinal()] = new SerializedString(v.name().toLowerCase(Locale.ROOT).replace('_', '-'));
    }
    return out;
  }
}
