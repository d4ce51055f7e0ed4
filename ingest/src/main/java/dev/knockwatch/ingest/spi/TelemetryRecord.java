package dev.knockwatch.ingest.spi;

import java.time.Instant;
import java.util.Map;

/**
 * One OpenTelemetry log record as a format that reads telemetry sees it: never the wire (OTLP's
 * protobuf or JSON, decoded by {@code ingest/otlp}), only text. Every value is the exporter's:
 * the agent's harness wrote it, and the model chose some of it (a command's text, its output);
 * none of it names the agent, which is the exporter's mapping (docs/TRUST.md).
 *
 * @param eventName the record's {@code event.name} attribute, else its {@code event_name}; null when neither
 * @param time the record's time, else its observed time; null when neither is set
 * @param attributes the record's attributes by key (the first of a repeated key), each value as
 *     text: a string as it is, a number or boolean as written, an array or map as JSON; bounded
 * @param resource its resource's attributes, alike ({@code service.name}, {@code service.version})
 * @param scope its instrumentation scope's name; "" when none
 * @param body its body as text, "" when none
 */
public record TelemetryRecord(String eventName, Instant time, Map<String, String> attributes,
    Map<String, String> resource, String scope, String body) {

  /** An attribute's value, or null. */
  public String attribute(String key) {
    return attributes.get(key);
  }

  /** The resource's {@code service.name}, or "". */
  public String service() {
    return resource.getOrDefault("service.name", "");
  }
}
