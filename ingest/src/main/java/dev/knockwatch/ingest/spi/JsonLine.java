package dev.knockwatch.ingest.spi;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Sanitize;

/**
 * A line that should hold one JSON object (a wall's JSON log): the object, else the rejection of a
 * line that holds none. Every format of JSON lines reads its lines through this, so that one
 * wording says what is wrong with one.
 *
 * @param object the line's object; null when it holds none
 * @param rejected why the line is no JSON object; null when it is one
 */
public record JsonLine(ObjectNode object, Parsed rejected) {

  public static JsonLine read(String text) {
    JsonNode root;
    try {
      root = Json.MAPPER.readTree(text);
    } catch (JsonProcessingException e) {
      return new JsonLine(null, Parsed.rejected(Rejection.UNPARSEABLE, "not JSON: " + Sanitize.text(e.getOriginalMessage(), 200)));
    }
    return root instanceof ObjectNode o ? new JsonLine(o, null)
        : new JsonLine(null, Parsed.rejected(Rejection.UNPARSEABLE, "a JSON line that is no object"));
  }
}
