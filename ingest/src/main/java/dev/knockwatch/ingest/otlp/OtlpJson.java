package dev.knockwatch.ingest.otlp;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.ByteString;
import dev.knockwatch.events.Redactor;
import io.opentelemetry.proto.common.v1.AnyValue;
import io.opentelemetry.proto.common.v1.ArrayValue;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.common.v1.KeyValueList;
import io.opentelemetry.proto.logs.v1.LogRecord;
import java.io.IOException;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * OTLP's JSON encoding of logs (opentelemetry-proto {@code docs/specification.md}, "JSON Protobuf
 * Encoding": proto3's JSON mapping with the trace and span ids in hex, enums as integers, keys in
 * lowerCamelCase, 64-bit integers as strings or numbers, unknown keys ignored), read into the
 * protobuf messages so that both encodings are one record from there on. The original field
 * names are read too, as the Collector reads them. A record of the wrong shape is one bad record,
 * never the request's others; a body that is no request at all is the request's fault.
 */
public final class OtlpJson {

  /** How deep a body's JSON may nest: a record's values at {@link OtlpLogs#MAX_DEPTH}, with room for the envelope. */
  static final int MAX_NESTING = 4 * OtlpLogs.MAX_DEPTH + 16;
  private static final ObjectMapper MAPPER = new ObjectMapper(JsonFactory.builder()
      .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(MAX_NESTING).maxNumberLength(64)
          .maxStringLength(Integer.MAX_VALUE).build())
      .build());
  private static final int MAX_BAD_TEXT_CHARS = 4096;

  private OtlpJson() {}

  /** A record of the wrong shape: why. */
  static final class Shape extends Exception {
    Shape(String message) {
      super(message, null, false, false);
    }
  }

  /** The records of one {@code ExportLogsServiceRequest} in JSON. */
  public static OtlpLogs.Decoded read(byte[] body) throws OtlpLogs.BadRequest {
    JsonNode root;
    try {
      root = MAPPER.readTree(body);
    } catch (JsonProcessingException e) {
      throw new OtlpLogs.BadRequest("not JSON: " + e.getOriginalMessage());
    } catch (IOException e) {
      throw new OtlpLogs.BadRequest("not JSON: " + e.getClass().getSimpleName());
    }
    return read(root);
  }

  /** The records of one request in a line of JSON (the Collector's file exporter writes one a line). */
  public static OtlpLogs.Decoded read(String line) throws OtlpLogs.BadRequest {
    JsonNode root;
    try {
      root = MAPPER.readTree(line);
    } catch (JsonProcessingException e) {
      throw new OtlpLogs.BadRequest("not JSON: " + e.getOriginalMessage());
    }
    return read(root);
  }

  private static OtlpLogs.Decoded read(JsonNode root) throws OtlpLogs.BadRequest {
    if (root == null || !root.isObject()) {
      throw new OtlpLogs.BadRequest("not an ExportLogsServiceRequest: the body is no JSON object");
    }
    JsonNode resourceLogs = field(root, "resourceLogs", "resource_logs");
    if (resourceLogs != null && !resourceLogs.isArray()) {
      throw new OtlpLogs.BadRequest("not an ExportLogsServiceRequest: resourceLogs is no array");
    }
    List<OtlpLogs.Entry> entries = new ArrayList<>();
    List<OtlpLogs.Bad> bad = new ArrayList<>();
    int index = 0;
    for (JsonNode rl : resourceLogs == null ? List.<JsonNode>of() : resourceLogs) {
      Map<String, String> resource = null;
      String resourceProblem = null;
      try {
        resource = OtlpLogs.attributes(keyValues(field(object(rl, "resourceLogs[]"), "resource"), "attributes", 0));
      } catch (Shape e) {
        resourceProblem = "its resource: " + e.getMessage();
      }
      for (JsonNode sl : array(rl, "scopeLogs", "scope_logs")) {
        String scope = "";
        String scopeProblem = resourceProblem;
        try {
          JsonNode s = field(object(sl, "scopeLogs[]"), "scope");
          if (s != null) {
            scope = string(field(object(s, "scope"), "name"), "scope.name");
          }
        } catch (Shape e) {
          scopeProblem = scopeProblem != null ? scopeProblem : "its scope: " + e.getMessage();
        }
        for (JsonNode r : array(sl, "logRecords", "log_records")) {
          int i = index++;
          try {
            if (scopeProblem != null) {
              throw new Shape(scopeProblem);
            }
            entries.add(OtlpLogs.entry(i, logRecord(r), resource, scope));
          } catch (Shape e) {
            bad.add(new OtlpLogs.Bad(i, e.getMessage(), Redactor.safe(r.toString(), MAX_BAD_TEXT_CHARS)));
          }
        }
      }
    }
    return new OtlpLogs.Decoded(entries, bad);
  }

  /** The elements of an array field; none when the node is no object or the field is absent or no array. */
  private static Iterable<JsonNode> array(JsonNode parent, String camel, String snake) {
    JsonNode a = parent != null && parent.isObject() ? field(parent, camel, snake) : null;
    return a != null && a.isArray() ? a : List.of();
  }

  static LogRecord logRecord(JsonNode r) throws Shape {
    object(r, "logRecord");
    LogRecord.Builder b = LogRecord.newBuilder();
    JsonNode n;
    if ((n = field(r, "timeUnixNano", "time_unix_nano")) != null) {
      b.setTimeUnixNano(uint64(n, "timeUnixNano"));
    }
    if ((n = field(r, "observedTimeUnixNano", "observed_time_unix_nano")) != null) {
      b.setObservedTimeUnixNano(uint64(n, "observedTimeUnixNano"));
    }
    if ((n = field(r, "severityNumber", "severity_number")) != null) {
      b.setSeverityNumberValue(int32(n, "severityNumber"));
    }
    if ((n = field(r, "severityText", "severity_text")) != null) {
      b.setSeverityText(string(n, "severityText"));
    }
    if ((n = field(r, "body")) != null) {
      b.setBody(anyValue(n, "body", 0));
    }
    b.addAllAttributes(keyValues(r, "attributes", 0));
    if ((n = field(r, "droppedAttributesCount", "dropped_attributes_count")) != null) {
      b.setDroppedAttributesCount(int32(n, "droppedAttributesCount"));
    }
    if ((n = field(r, "flags")) != null) {
      b.setFlags(int32(n, "flags"));
    }
    if ((n = field(r, "traceId", "trace_id")) != null) {
      b.setTraceId(hex(n, "traceId"));
    }
    if ((n = field(r, "spanId", "span_id")) != null) {
      b.setSpanId(hex(n, "spanId"));
    }
    if ((n = field(r, "eventName", "event_name")) != null) {
      b.setEventName(string(n, "eventName"));
    }
    return b.build();
  }

  /** The {@code attributes} (or a kvlist's {@code values}) of {@code parent}: none when it or they are absent. */
  private static List<KeyValue> keyValues(JsonNode parent, String field, int depth) throws Shape {
    if (parent == null || parent.isNull()) {
      return List.of();
    }
    object(parent, field + "'s parent");
    JsonNode list = field(parent, field);
    if (list == null) {
      return List.of();
    }
    if (!list.isArray()) {
      throw new Shape(field + " is no array");
    }
    List<KeyValue> out = new ArrayList<>(list.size());
    for (JsonNode kv : list) {
      object(kv, field + "[]");
      KeyValue.Builder b = KeyValue.newBuilder().setKey(string(field(kv, "key"), "a key"));
      JsonNode v = field(kv, "value");
      if (v != null) {
        b.setValue(anyValue(v, "the value of " + b.getKey(), depth));
      }
      out.add(b.build());
    }
    return out;
  }

  static AnyValue anyValue(JsonNode v, String what, int depth) throws Shape {
    if (depth > OtlpLogs.MAX_DEPTH) {
      throw new Shape(what + " nests deeper than " + OtlpLogs.MAX_DEPTH);
    }
    object(v, what);
    AnyValue.Builder b = AnyValue.newBuilder();
    JsonNode n;
    if ((n = field(v, "stringValue", "string_value")) != null) {
      b.setStringValue(string(n, what));
    } else if ((n = field(v, "boolValue", "bool_value")) != null) {
      if (!n.isBoolean()) {
        throw new Shape(what + ": boolValue is no boolean");
      }
      b.setBoolValue(n.booleanValue());
    } else if ((n = field(v, "intValue", "int_value")) != null) {
      b.setIntValue(int64(n, what));
    } else if ((n = field(v, "doubleValue", "double_value")) != null) {
      b.setDoubleValue(dbl(n, what));
    } else if ((n = field(v, "bytesValue", "bytes_value")) != null) {
      try {
        b.setBytesValue(ByteString.copyFrom(Base64.getMimeDecoder().decode(string(n, what).replace('-', '+')
            .replace('_', '/'))));
      } catch (IllegalArgumentException e) {
        throw new Shape(what + ": bytesValue is no base64");
      }
    } else if ((n = field(v, "arrayValue", "array_value")) != null) {
      object(n, what + ".arrayValue");
      ArrayValue.Builder a = ArrayValue.newBuilder();
      JsonNode values = field(n, "values");
      if (values != null && !values.isArray()) {
        throw new Shape(what + ": arrayValue.values is no array");
      }
      for (JsonNode e : values == null ? List.<JsonNode>of() : values) {
        a.addValues(anyValue(e, what + "[]", depth + 1));
      }
      b.setArrayValue(a);
    } else if ((n = field(v, "kvlistValue", "kvlist_value")) != null) {
      b.setKvlistValue(KeyValueList.newBuilder().addAllValues(keyValues(n, "values", depth + 1)));
    }
    return b.build();
  }

  /** A field by its lowerCamelCase name, else its original one; null when absent or JSON null. */
  private static JsonNode field(JsonNode parent, String camel, String snake) {
    JsonNode n = parent.get(camel);
    if (n == null || n.isNull()) {
      n = parent.get(snake);
    }
    return n == null || n.isNull() ? null : n;
  }

  private static JsonNode field(JsonNode parent, String name) {
    JsonNode n = parent.get(name);
    return n == null || n.isNull() ? null : n;
  }

  private static JsonNode object(JsonNode n, String what) throws Shape {
    if (n == null || !n.isObject()) {
      throw new Shape(what + " is no object");
    }
    return n;
  }

  /** A string, with any code point that is no character made U+FFFD (protobuf holds UTF-8). */
  private static String string(JsonNode n, String what) throws Shape {
    if (n == null) {
      return "";
    }
    if (!n.isTextual()) {
      throw new Shape(what + " is no string");
    }
    return wellFormed(n.textValue());
  }

  static String wellFormed(String s) {
    StringBuilder out = null;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      boolean pair = Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1));
      if (pair) {
        if (out != null) {
          out.append(c).append(s.charAt(i + 1));
        }
        i++;
      } else if (Character.isSurrogate(c)) {
        if (out == null) {
          out = new StringBuilder(s.length()).append(s, 0, i);
        }
        out.append('\uFFFD');
      } else if (out != null) {
        out.append(c);
      }
    }
    return out == null ? s : out.toString();
  }

  private static BigInteger integer(JsonNode n, String what) throws Shape {
    try {
      if (n.isIntegralNumber()) {
        return n.bigIntegerValue();
      }
      if (n.isTextual()) {
        return new BigInteger(n.textValue().strip());
      }
      if (n.isNumber()) {
        return new BigDecimal(n.asText()).toBigIntegerExact();
      }
    } catch (NumberFormatException | ArithmeticException e) {
      // falls through
    }
    throw new Shape(what + " is no integer");
  }

  private static long uint64(JsonNode n, String what) throws Shape {
    BigInteger v = integer(n, what);
    if (v.signum() < 0 || v.bitLength() > 64) {
      throw new Shape(what + " is out of an unsigned 64-bit integer's range");
    }
    return v.longValue();
  }

  private static long int64(JsonNode n, String what) throws Shape {
    BigInteger v = integer(n, what);
    if (v.bitLength() > 63) {
      throw new Shape(what + " is out of a 64-bit integer's range");
    }
    return v.longValue();
  }

  private static int int32(JsonNode n, String what) throws Shape {
    BigInteger v = integer(n, what);
    if (v.bitLength() > 32) {
      throw new Shape(what + " is out of a 32-bit integer's range");
    }
    return v.intValue();
  }

  private static double dbl(JsonNode n, String what) throws Shape {
    if (n.isNumber()) {
      return n.doubleValue();
    }
    if (n.isTextual()) {
      switch (n.textValue()) {
        case "NaN":
          return Double.NaN;
        case "Infinity":
          return Double.POSITIVE_INFINITY;
        case "-Infinity":
          return Double.NEGATIVE_INFINITY;
        default:
          try {
            return Double.parseDouble(n.textValue());
          } catch (NumberFormatException e) {
            // falls through
          }
      }
    }
    throw new Shape(what + ": doubleValue is no number");
  }

  private static ByteString hex(JsonNode n, String what) throws Shape {
    String s = string(n, what);
    try {
      return ByteString.copyFrom(HexFormat.of().parseHex(s.toLowerCase(java.util.Locale.ROOT)));
    } catch (IllegalArgumentException e) {
      throw new Shape(what + " is no hex");
    }
  }
}
