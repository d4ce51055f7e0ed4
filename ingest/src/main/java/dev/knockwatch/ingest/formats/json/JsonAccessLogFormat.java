package dev.knockwatch.ingest.formats.json;

import dev.knockwatch.events.config.Key;
import dev.knockwatch.events.config.YamlNode;
import dev.knockwatch.ingest.spi.FileOptions;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.SourceFormat;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** JSON access logs through a field mapping (Envoy's JSON format, any JSON lines): a shared proxy log. */
public final class JsonAccessLogFormat implements SourceFormat {

  public static final String NAME = "json";

  static final Key<Map<String, String>> MAPPING = Key.<Map<String, String>>of("mapping",
      "mapping of event fields to dotted JSON paths", null, "required",
      "which JSON path holds each event field (" + String.join(", ", JsonAccessLogParser.FIELDS.stream().sorted().toList())
          + ")", JsonAccessLogFormat::mapping)
      .requiredAs("is missing: a json source needs a \"mapping\" of event fields to JSON paths");
  static final Key<Set<Integer>> REFUSED = Key.of("refusedStatuses", "list of status codes", Set.of(403, 407),
      "403, 407", "the statuses that are refusals", JsonAccessLogFormat::statuses);

  @Override
  public String wireName() {
    return NAME;
  }

  @Override
  public String summary() {
    return "JSON access logs (Envoy's JSON format or any JSON lines), read through a field mapping (`commandId`,"
        + " `agentId`, `host`, `port`, `authority`, `method`, `url`, `status`, `reason`, `proxyError`, `timestamp` → a"
        + " dotted JSON path); lines whose status is a refusal (default 403, 407) become events. A mapped `agentId`"
        + " names the agent (map it only to a field the proxy fills from the client's authenticated identity); a"
        + " mapped `commandId` is a claim";
  }

  @Override
  public Choice choice() {
    return Choice.byTypeOnly();
  }

  @Override
  public boolean perCommand() {
    return false;
  }

  @Override
  public List<Key<?>> keys() {
    return List.of(MAPPING, REFUSED);
  }

  @Override
  public LineParser parser(FileOptions options) {
    return new JsonAccessLogParser(options.get(MAPPING), options.get(REFUSED));
  }

  @Override
  public List<Skip> skips() {
    return List.of(new Skip("allowed", "a request the proxy let through (its status is not one of `refusedStatuses`)"));
  }

  @Override
  public String yields() {
    return "each denied request (a mapped status of 403/407, or of `refusedStatuses`)";
  }

  @Override
  public Trust trust() {
    return new Trust("the proxy (Envoy, or any that writes JSON lines), outside the sandbox: the line's structure",
        "the agent where the config names it, or a mapped `agentId` — the operator's word that the field is the"
        + " proxy's own knowledge of the client (a client certificate, an authenticated user); a mapped `commandId` is"
        + " the client's claim",
        "the URL, the host, the headers it sent; any field the mapping takes from a request header");
  }

  private static Map<String, String> mapping(YamlNode node, String where) {
    if (!node.isMapping()) {
      node.problem(where + ": \"mapping\" must be a mapping");
      return null;
    }
    Map<String, String> out = new LinkedHashMap<>();
    for (YamlNode.Entry f : node.entries("mapping")) {
      String value = f.value().string(where + ": mapping: " + f.name());
      if (value != null) {
        out.put(f.name(), value);
      }
    }
    if (out.isEmpty()) {
      node.problem(where + ": a json source needs a \"mapping\" of event fields to JSON paths");
      return null;
    }
    try {
      new JsonAccessLogParser(out, Set.of());
    } catch (IllegalArgumentException e) {
      node.problem(where + ": mapping: " + e.getMessage());
      return null;
    }
    return Map.copyOf(out);
  }

  private static Set<Integer> statuses(YamlNode node, String where) {
    Set<Integer> out = new HashSet<>();
    for (YamlNode v : node.oneOrMany(where + ": refusedStatuses")) {
      String code = v.text();
      if (code == null || !code.matches("[0-9]{1,9}")) {
        v.problem(where + ": refusedStatuses: \"" + code + "\" is not a status code");
      } else {
        out.add(Integer.parseInt(code));
      }
    }
    return Set.copyOf(out);
  }
}
