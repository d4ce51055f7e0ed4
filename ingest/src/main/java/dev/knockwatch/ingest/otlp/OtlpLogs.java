package dev.knockwatch.ingest.otlp;

import com.fasterxml.jackson.core.JsonGenerator;
import com.google.protobuf.CodedInputStream;
import dev.knockwatch.events.Hashes;
import dev.knockwatch.events.Json;
import dev.knockwatch.ingest.spi.TelemetryRecord;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.logs.v1.LogRecord;
import io.opentelemetry.proto.logs.v1.ResourceLogs;
import io.opentelemetry.proto.logs.v1.ScopeLogs;
import java.io.IOException;
import java.io.StringWriter;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * OTLP's logs as ingest reads them: an {@code ExportLogsServiceRequest} from its binary protobuf
 * (or, through {@link OtlpJson}, its JSON), each log record flattened for the formats
 * ({@link TelemetryRecord}), bounded, with a digest that names the record however it came.
 * The specification: opentelemetry-proto's {@code docs/specification.md} (OTLP/HTTP, its JSON
 * encoding) and {@code opentelemetry/proto/logs/v1/logs.proto}.
 */
public final class OtlpLogs {

  /** Attributes of one record (or resource) kept; the rest are left out, said in {@link #DROPPED_KEY}. */
  public static final int MAX_ATTRIBUTES = 128;
  public static final int MAX_KEY_CHARS = 256;
  /** A value longer than this keeps its start and its end (a tool's output ends with its refusal). */
  public static final int MAX_VALUE_CHARS = 64 * 1024;
  /** How deep arrays and maps of values nest, in protobuf and in JSON alike. */
  public static final int MAX_DEPTH = 16;
  /** The attribute that says how many of a record's attributes were left out; absent when none were. */
  public static final String DROPPED_KEY = "knockwatch.dropped_attributes";

  private OtlpLogs() {}

  /** A request that cannot be decoded: the exporter's fault, answered with 400, never retried. */
  public static final class BadRequest extends Exception {
    public BadRequest(String message) {
      super(message);
    }
  }

  /**
   * One record of a request: what a format reads, the digest its event ids come from (of the
   * record's protobuf bytes: the same record whether it came as protobuf, JSON, again or through a
   * file), and where it stands in the request.
   */
  public record Entry(int index, TelemetryRecord record, String digest) {

    /** The record as text, for the rejected line it may become. */
    public String text() {
      return Json.write(Map.of("eventName", String.valueOf(record.eventName()), "time", String.valueOf(record.time()),
          "attributes", record.attributes(), "resource", record.resource(), "scope", record.scope(), "body",
          record.body()));
    }
  }

  /** A record that could not be read (a JSON record of the wrong shape), and why. */
  public record Bad(int index, String reason, String text) {}

  /** A request's records: those read, and those that could not be, in one numbering. */
  public record Decoded(List<Entry> entries, List<Bad> bad) {
    public int size() {
      return entries.size() + bad.size();
    }
  }

  /** The request of a binary protobuf body; nesting deeper than {@link #MAX_DEPTH} + 8 is refused. */
  public static ExportLogsServiceRequest fromProtobuf(byte[] body) throws BadRequest {
    try {
      CodedInputStream in = CodedInputStream.newInstance(body);
      in.setRecursionLimit(MAX_DEPTH + 8);
      in.setSizeLimit(Integer.MAX_VALUE);
      ExportLogsServiceRequest r = ExportLogsServiceRequest.parseFrom(in);
      return r;
    } catch (IOException e) { // InvalidProtocolBufferException: the body is no such message
      throw new BadRequest("not an ExportLogsServiceRequest in protobuf: " + e.getMessage());
    } catch (RuntimeException e) { // the runtime's own failure on a hostile body: still the body's fault
      throw new BadRequest("not an ExportLogsServiceRequest in protobuf: " + e.getClass().getSimpleName());
    }
  }

  /** Every record of {@code request}, flattened, in order. */
  public static Decoded records(ExportLogsServiceRequest request) {
    List<Entry> out = new ArrayList<>();
    int index = 0;
    for (ResourceLogs rl : request.getResourceLogsList()) {
      Map<String, String> resource = attributes(rl.getResource().getAttributesList());
      for (ScopeLogs sl : rl.getScopeLogsList()) {
        String scope = sl.getScope().getName();
        for (LogRecord r : sl.getLogRecordsList()) {
          out.add(entry(index++, r, resource, scope));
        }
      }
    }
    return new Decoded(out, List.of());
  }

  static Entry entry(int index, LogRecord r, Map<String, String> resource, String scope) {
    Map<String, String> attrs = attributes(r.getAttributesList());
    // the attribute first: Rust's tracing bridge (Codex) puts the call site in event_name ("event otel/src/...:1259")
    String name = attrs.containsKey("event.name") ? attrs.get("event.name")
        : r.getEventName().isEmpty() ? null : bounded(r.getEventName());
    long nanos = r.getTimeUnixNano() != 0 ? r.getTimeUnixNano() : r.getObservedTimeUnixNano();
    TelemetryRecord t = new TelemetryRecord(name, nanos == 0 ? null : instant(nanos), attrs, resource,
        bounded(scope), r.hasBody() ? text(r.getBody(), 0) : "");
    return new Entry(index, t, Hashes.sha256Hex(r.toByteArray(), 16));
  }

  /** A time in Unix nanoseconds, which OTLP holds unsigned. */
  static Instant instant(long nanos) {
    return Instant.ofEpochSecond(Long.divideUnsigned(nanos, 1_000_000_000L), Long.remainderUnsigned(nanos, 1_000_000_000L));
  }

  /** Attributes by key, the first of a repeated key, at most {@link #MAX_ATTRIBUTES}. */
  static Map<String, String> attributes(List<KeyValue> list) {
    if (list.isEmpty()) {
      return Map.of();
    }
    Map<String, String> out = new LinkedHashMap<>();
    int dropped = 0;
    for (KeyValue kv : list) {
      String key = key(kv.getKey());
      if (out.containsKey(key)) {
        continue;
      }
      if (out.size() >= MAX_ATTRIBUTES) {
        dropped++;
        continue;
      }
      out.put(key, text(kv.getValue(), 0));
    }
    if (dropped > 0) {
      out.put(DROPPED_KEY, Integer.toString(dropped));
    }
    return Collections.unmodifiableMap(out);
  }

  /** A value as text: a string as it is, a scalar as written, an array or map as JSON; bounded. */
  static String text(AnyValue v, int depth) {
    return switch (v.getValueCase()) {
      case STRING_VALUE -> bounded(v.getStringValue());
      case BOOL_VALUE -> Boolean.toString(v.getBoolValue());
      case INT_VALUE -> Long.toString(v.getIntValue());
      case DOUBLE_VALUE -> Double.toString(v.getDoubleValue());
      case BYTES_VALUE -> bounded(Base64.getEncoder().encodeToString(v.getBytesValue().toByteArray()));
      case ARRAY_VALUE, KVLIST_VALUE -> bounded(json(v));
      default -> "";
    };
  }

  private static String json(AnyValue v) {
    StringWriter w = new StringWriter();
    try (JsonGenerator g = Json.MAPPER.getFactory().createGenerator(w)) {
      write(g, v, 0);
    } catch (IOException e) {
      return "";
    }
    return w.toString();
  }

  private static void write(JsonGenerator g, AnyValue v, int depth) throws IOException {
    if (depth > MAX_DEPTH) {
      g.writeString("…");
      return;
    }
    switch (v.getValueCase()) {
      case STRING_VALUE -> g.writeString(bounded(v.getStringValue()));
      case BOOL_VALUE -> g.writeBoolean(v.getBoolValue());
      case INT_VALUE -> g.writeNumber(v.getIntValue());
      case DOUBLE_VALUE -> {
        double d = v.getDoubleValue();
        if (Double.isFinite(d)) {
          g.writeNumber(d);
        } else {
          g.writeString(Double.toString(d));
        }
      }
      case BYTES_VALUE -> g.writeString(Base64.getEncoder().encodeToString(v.getBytesValue().toByteArray()));
      case ARRAY_VALUE -> {
        g.writeStartArray();
        for (AnyValue e : v.getArrayValue().getValuesList()) {
          write(g, e, depth + 1);
        }
        g.writeEndArray();
      }
      case KVLIST_VALUE -> {
        g.writeStartObject();
        for (KeyValue kv : v.getKvlistValue().getValuesList()) {
          g.writeFieldName(key(kv.getKey()));
          write(g, kv.getValue(), depth + 1);
        }
        g.writeEndObject();
      }
      default -> g.writeNull();
    }
  }

  /** A key of at most {@link #MAX_KEY_CHARS}, never half a pair. */
  static String key(String k) {
    if (k.length() <= MAX_KEY_CHARS) {
      return k;
    }
    return k.substring(0, Character.isHighSurrogate(k.charAt(MAX_KEY_CHARS - 1)) ? MAX_KEY_CHARS - 1 : MAX_KEY_CHARS);
  }

  /** Text of at most {@link #MAX_VALUE_CHARS}: a longer one keeps its start and end, never half a pair. */
  static String bounded(String s) {
    if (s.length() <= MAX_VALUE_CHARS) {
      return s;
    }
    int half = MAX_VALUE_CHARS / 2;
    int head = Character.isHighSurrogate(s.charAt(half - 1)) ? half - 1 : half;
    int tailStart = s.length() - half;
    if (Character.isLowSurrogate(s.charAt(tailStart))) {
      tailStart++;
    }
    return s.substring(0, head) + "\n…\n" + s.substring(tailStart);
  }
}
