package dev.knockwatch.ingest.formats.ocsf;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Redactor;
import dev.knockwatch.events.Sanitize;
import java.util.Iterator;
import java.util.Map;

/**
 * The producer's own OCSF record, kept on its event ({@code producer}) so that the OCSF export
 * gives a SIEM back every field the producer wrote (its class and activity, its metadata, the
 * process and its parents, the firewall rule, the container), not only what knockwatch reads.
 *
 * <p>The record holds what the agent wrote (a command line, a URL, a host), so the copy is made
 * safe before it leaves ingest, as every other field is: each string and key sanitized and bounded,
 * each string redacted (tokens, passwords, secrets in query strings: {@link Redactor}); nesting,
 * lists and objects bounded. A copy longer than {@link #MAX_CHARS} is not kept: the event still
 * carries everything knockwatch reads of it.
 */
final class ProducerRecord {

  static final int MAX_CHARS = 8 * 1024;
  static final int MAX_DEPTH = 8;
  static final int MAX_FIELDS = 64;
  static final int MAX_ITEMS = 32;
  static final int MAX_KEY_CHARS = 64;
  static final int MAX_STRING_CHARS = 1024;

  private ProducerRecord() {}

  /** The safe copy of {@code record} as JSON text; null when it would be longer than {@link #MAX_CHARS}. */
  static String copy(JsonNode record) {
    JsonNode safe = safe(record, 0);
    if (safe == null || !safe.isObject()) {
      return null;
    }
    try {
      String text = Json.MAPPER.writeValueAsString(safe);
      return text.length() <= MAX_CHARS ? text : null;
    } catch (JsonProcessingException e) {
      return null;
    }
  }

  /** The record a copy holds; null when there is none or it is no JSON object. */
  static ObjectNode read(String copy) {
    if (copy == null || copy.isEmpty()) {
      return null;
    }
    try {
      JsonNode n = Json.MAPPER.readTree(copy);
      return n instanceof ObjectNode o ? o : null;
    } catch (JsonProcessingException e) {
      return null;
    }
  }

  private static JsonNode safe(JsonNode n, int depth) {
    JsonNodeFactory f = JsonNodeFactory.instance;
    if (n == null || n.isNull()) {
      return f.nullNode();
    }
    if (n.isTextual()) {
      return f.textNode(Redactor.safe(n.textValue(), MAX_STRING_CHARS));
    }
    if (n.isNumber() || n.isBoolean()) {
      return n;
    }
    if (depth >= MAX_DEPTH) {
      return null;
    }
    if (n.isArray()) {
      ArrayNode out = f.arrayNode();
      for (JsonNode item : n) {
        if (out.size() >= MAX_ITEMS) {
          break;
        }
        JsonNode s = safe(item, depth + 1);
        if (s != null) {
          out.add(s);
        }
      }
      return out;
    }
    if (n.isObject()) {
      ObjectNode out = f.objectNode();
      Iterator<Map.Entry<String, JsonNode>> fields = n.fields();
      while (fields.hasNext() && out.size() < MAX_FIELDS) {
        Map.Entry<String, JsonNode> field = fields.next();
        String key = Sanitize.text(field.getKey(), MAX_KEY_CHARS);
        JsonNode s = safe(field.getValue(), depth + 1);
        if (!key.isBlank() && s != null && !out.has(key)) {
          out.set(key, s);
        }
      }
      return out;
    }
    return null; // binary, POJO: no JSON a producer writes
  }
}
