package dev.knockwatch.ingest.raw;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.Json;
import dev.knockwatch.ingest.tail.Bytes;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.regex.Pattern;

/**
 * One line as a log shipper carried it to the raw topic ({@code knockwatch.raw}): the line's text,
 * the path of the file it came from, the host, and the shipper's byte offset where it has one.
 * A record's value is a JSON object; each part is read under the contract's own name or the name
 * a shipper gives it (docs/FORMATS.md "Raw lines from your shipper", with the sources):
 *
 * <ul>
 *   <li>line: {@code line}; rsyslog {@code msg}; Vector and Filebeat {@code message}; syslog-ng
 *   {@code MESSAGE}; Fluent Bit {@code log};
 *   <li>path: {@code path}; rsyslog {@code $!metadata!filename} as {@code filename} or
 *   {@code metadata.filename}; Vector {@code file}; syslog-ng {@code FILE_NAME}; Filebeat
 *   {@code log.file.path} (Fluent Bit's {@code Path_Key} is set to {@code path});
 *   <li>host: {@code host}; rsyslog {@code hostname}; syslog-ng {@code HOST}; Filebeat {@code host.name};
 *   <li>offset: {@code offset} (Vector's {@code offset_key}, Fluent Bit's {@code Offset_Key});
 *   rsyslog {@code fileoffset} or {@code metadata.fileoffset}; Filebeat {@code log.offset}.
 * </ul>
 *
 * A name whose value is an object is a container, not the part (Filebeat's {@code host} and
 * {@code log}). Two names of one part with different values make the record ambiguous: it is
 * refused, never guessed. The line is the agent's text (the shipper JSON-escaped it); the path,
 * host and offset are the shipper's (docs/TRUST.md).
 *
 * <p>A shipper writes the file's bytes as they are into its JSON (rsyslog does): bytes that are not
 * UTF-8 are read as U+FFFD, as the agent reads them from a file, and the record says so.
 *
 * @param offset the line's byte offset in its file, or null where the shipper gives none
 * @param invalidUtf8 whether the value held bytes that are not UTF-8 (each read as U+FFFD)
 */
public record RawRecord(String line, String path, String host, Long offset, boolean invalidUtf8) {

  public RawRecord(String line, String path, String host, Long offset) {
    this(line, path, host, offset, false);
  }

  static final List<String> LINE = List.of("line", "msg", "message", "MESSAGE", "log");
  static final List<String> PATH = List.of("path", "filename", "metadata.filename", "file", "FILE_NAME",
      "log.file.path");
  static final List<String> HOST = List.of("host", "hostname", "HOST", "host.name");
  static final List<String> OFFSET = List.of("offset", "fileoffset", "metadata.fileoffset", "log.offset");

  /** A host name as shippers write it: letters, digits, dots, dashes, underscores, colons. */
  private static final Pattern HOST_NAME = Pattern.compile("[A-Za-z0-9._:-]{1,253}");
  static final int MAX_PATH_CHARS = 4096;

  /** What a record's value holds: the line, or why it is no raw line. */
  public sealed interface Read permits Line, Problem {}

  public record Line(RawRecord record) implements Read {}

  /** @param reason a fixed sentence naming the part; never the agent's bytes */
  public record Problem(String reason) implements Read {}

  /** The raw line a record's value holds, or why it holds none. */
  public static Read read(byte[] value) {
    if (value == null) {
      return new Problem("the record has no value");
    }
    String text = new String(value, StandardCharsets.UTF_8); // each bad sequence as U+FFFD
    boolean invalid = Bytes.invalidUtf8(value, 0, value.length, text);
    JsonNode root;
    try {
      root = Json.MAPPER.readTree(text);
    } catch (IOException e) {
      return new Problem("the value is not JSON");
    }
    if (root == null || !root.isObject()) {
      return new Problem("the value is not a JSON object");
    }
    try {
      String line = text(root, LINE, "line");
      String path = text(root, PATH, "path");
      if (line == null) {
        return new Problem("no line: none of " + LINE + " is a string");
      }
      if (path == null) {
        return new Problem("no path: none of " + PATH + " is a string");
      }
      if (path.isEmpty() || path.length() > MAX_PATH_CHARS) {
        return new Problem("the path is empty or longer than " + MAX_PATH_CHARS + " characters");
      }
      String host = text(root, HOST, "host");
      if (host != null && !HOST_NAME.matcher(host).matches()) {
        return new Problem("the host is no host name (letters, digits, . _ : -, at most 253)");
      }
      return new Line(new RawRecord(line, path, host, offset(root), invalid));
    } catch (Ambiguous e) {
      return new Problem(e.getMessage());
    }
  }

  /** The part's one string under any of {@code names}; null when none holds one. */
  private static String text(JsonNode root, List<String> names, String part) throws Ambiguous {
    String found = null;
    String foundAt = null;
    for (String name : names) {
      JsonNode n = at(root, name);
      if (n == null || n.isNull() || n.isObject()) {
        continue; // absent, or a container (Filebeat's host and log)
      }
      if (!n.isTextual()) {
        throw new Ambiguous("the " + part + " (" + name + ") is not a string");
      }
      if (found != null && !found.equals(n.textValue())) {
        throw new Ambiguous("two different " + part + "s, under " + foundAt + " and " + name);
      }
      found = n.textValue();
      foundAt = name;
    }
    return found;
  }

  private static Long offset(JsonNode root) throws Ambiguous {
    Long found = null;
    for (String name : OFFSET) {
      JsonNode n = at(root, name);
      if (n == null || n.isNull()) {
        continue;
      }
      long v;
      if (n.isIntegralNumber() && n.canConvertToLong()) {
        v = n.longValue();
      } else if (n.isTextual() && n.textValue().matches("[0-9]{1,18}")) {
        v = Long.parseLong(n.textValue()); // rsyslog writes its properties as strings
      } else {
        throw new Ambiguous("the offset (" + name + ") is no byte offset (a whole number of at most 18 digits)");
      }
      if (v < 0) {
        throw new Ambiguous("the offset (" + name + ") is negative");
      }
      if (found != null && found != v) {
        throw new Ambiguous("two different offsets");
      }
      found = v;
    }
    return found;
  }

  /** {@code a.b.c}: the field {@code a.b.c} itself, else {@code c} in {@code b} in {@code a}. */
  private static JsonNode at(JsonNode root, String name) {
    JsonNode n = root.get(name);
    if (n != null || name.indexOf('.') < 0) {
      return n;
    }
    n = root;
    for (String part : name.split("\\.")) {
      n = n.get(part);
      if (n == null) {
        return null;
      }
    }
    return n;
  }

  private static final class Ambiguous extends Exception {
    Ambiguous(String message) {
      super(message, null, false, false);
    }
  }
}
