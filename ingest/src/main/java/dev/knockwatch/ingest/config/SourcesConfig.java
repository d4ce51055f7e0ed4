package dev.knockwatch.ingest.config;

import dev.knockwatch.events.ConfigException;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.knockwatch.events.Hashes;
import dev.knockwatch.ingest.IngestAgent;
import dev.knockwatch.ingest.IngestAgent.Feed;
import dev.knockwatch.ingest.IngestAgent.FileContext;
import dev.knockwatch.ingest.LineParser;
import dev.knockwatch.ingest.SourceType;
import dev.knockwatch.ingest.json.JsonAccessLogParser;
import dev.knockwatch.ingest.proxy.CurlTranscriptParser;
import dev.knockwatch.ingest.squid.SquidAccessLogParser;
import dev.knockwatch.ingest.squid.SquidLogFormat;
import dev.knockwatch.ingest.tail.FileTailer;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The ingest agent's sources, from YAML:
 * <pre>
 * sources:
 *   - path: logs/{agentId}/{commandId}.violations.jsonl   # glob (*, **, ?) with fields from the path
 *     type: srt-violation                                 # optional: else the suffix, else the first line
 *   - path: /var/log/squid/access.log
 *     type: squid
 *     logformat: knock                                    # squid: a name or a logformat string
 *     fields: {agentId: squid-proxy-1}                    # static fields
 *   - path: /var/log/envoy/access.json
 *     type: json
 *     mapping: {commandId: request_headers.x-command-id, authority: authority, status: response_code}
 * </pre>
 * Relative paths are read from the config file's directory. Every problem is reported with the
 * file, the source's number and the exact key.
 */
public final class SourcesConfig {

  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final Set<String> KEYS = Set.of("path", "type", "fields", "logformat", "mapping", "denyHeaders",
      "refusedStatuses");
  private static final Set<String> STATIC_FIELDS = Set.of("agentId", "commandId");
  private static final Pattern TEMPLATE = Pattern.compile("\\{(agentId|commandId)\\}");

  private SourcesConfig() {}

  /** The feeds of {@code file}; each keeps its checkpoints in {@code checkpointDir}. */
  public static List<Feed> load(Path file, Path checkpointDir) {
    JsonNode root;
    try {
      root = YAML.readTree(file.toFile());
    } catch (JsonProcessingException e) {
      throw new ConfigException(file + ": not valid YAML: " + e.getOriginalMessage().lines().findFirst().orElse(""));
    } catch (IOException e) {
      throw new ConfigException(file + ": cannot read: " + e.getMessage());
    }
    JsonNode sources = root == null ? null : root.get("sources");
    if (sources == null || !sources.isArray() || sources.isEmpty()) {
      throw new ConfigException(file + ": needs a non-empty top-level \"sources:\" list");
    }
    Path base = file.toAbsolutePath().getParent();
    List<Feed> feeds = new ArrayList<>();
    int n = 0;
    for (JsonNode s : sources) {
      n++;
      feeds.add(feed(file + ": source " + n, s, base, checkpointDir));
    }
    return feeds;
  }

  private static Feed feed(String where, JsonNode s, Path base, Path checkpointDir) {
    if (!s.isObject()) {
      throw new ConfigException(where + ": must be a mapping with at least \"path\"");
    }
    s.fieldNames().forEachRemaining(k -> {
      if (!KEYS.contains(k)) {
        throw new ConfigException(where + ": unknown key \"" + k + "\" (known: " + String.join(", ", new TreeSet<>(KEYS)) + ")");
      }
    });
    String path = text(s, "path").orElseThrow(() -> new ConfigException(where + ": \"path\" is required"));
    Optional<SourceType> type = text(s, "type").map(t -> SourceType.byName(t).orElseThrow(() ->
        new ConfigException(where + ": type \"" + t + "\" is not one of " + SourceType.names())));
    Map<String, String> fields = map(where, s, "fields");
    fields.keySet().forEach(k -> {
      if (!STATIC_FIELDS.contains(k)) {
        throw new ConfigException(where + ": fields: unknown field \"" + k + "\" (known: agentId, commandId)");
      }
    });
    Supplier<LineParser> parsers = type.map(t -> parserFactory(where, t, s)).orElse(null);
    if (type.isEmpty() && (s.has("mapping") || s.has("logformat"))) {
      throw new ConfigException(where + ": \"mapping\" and \"logformat\" need an explicit \"type\"");
    }

    Template t = Template.of(base, path);
    FileTailer tailer = new FileTailer(t.root(), p -> t.matches(t.root().relativize(p).toString().replace('\\', '/')),
        checkpointDir.resolve("checkpoints-" + Hashes.sha256Hex(t.root() + "|" + path, 6) + ".json"), IngestAgent.MAX_LINE_BYTES);
    Function<String, FileContext> context = IngestAgent.cached(r -> {
      Map<String, String> fromPath = t.fields(r);
      SourceType ft = type.orElseGet(() -> detect(t.root().resolve(r)).orElse(null));
      Supplier<LineParser> p = parsers != null ? parsers : ft == null ? null : ft::newParser;
      // as in the default layout <agentId>/<commandId>.<suffix>, unless the path or the config says otherwise
      String agentId = fromPath.getOrDefault("agentId", fields.getOrDefault("agentId", IngestAgent.agentIdOf(r)));
      String commandId = fromPath.getOrDefault("commandId", fields.getOrDefault("commandId",
          ft == null ? null : IngestAgent.commandIdOf(ft, IngestAgent.fileName(r))));
      return new FileContext(ft, p, agentId, commandId);
    });
    return new Feed(tailer, context, t.root().toString().replace('\\', '/') + "/");
  }

  private static Supplier<LineParser> parserFactory(String where, SourceType type, JsonNode s) {
    switch (type) {
      case SQUID -> {
        Optional<String> format = text(s, "logformat");
        if (format.isEmpty()) {
          return SquidAccessLogParser::new;
        }
        try {
          SquidLogFormat.of(format.get());
        } catch (IllegalArgumentException e) {
          throw new ConfigException(where + ": logformat: " + e.getMessage());
        }
        return () -> new SquidAccessLogParser(format.get());
      }
      case JSON -> {
        Map<String, String> mapping = map(where, s, "mapping");
        if (mapping.isEmpty()) {
          throw new ConfigException(where + ": type json needs a \"mapping\" of event fields to JSON paths");
        }
        Set<Integer> statuses = new java.util.HashSet<>();
        if (s.has("refusedStatuses")) {
          s.get("refusedStatuses").forEach(v -> {
            if (!v.canConvertToInt()) {
              throw new ConfigException(where + ": refusedStatuses: \"" + v.asText() + "\" is not a status code");
            }
            statuses.add(v.asInt());
          });
        } else {
          statuses.addAll(Set.of(403, 407));
        }
        try {
          new JsonAccessLogParser(mapping, statuses);
        } catch (IllegalArgumentException e) {
          throw new ConfigException(where + ": mapping: " + e.getMessage());
        }
        return () -> new JsonAccessLogParser(mapping, statuses);
      }
      case PROXY_403 -> {
        if (!s.has("denyHeaders")) {
          return CurlTranscriptParser::new;
        }
        List<String> headers = new ArrayList<>();
        s.get("denyHeaders").forEach(h -> headers.add(h.asText().toLowerCase(Locale.ROOT)));
        return () -> new CurlTranscriptParser(headers);
      }
      default -> {
        return type::newParser;
      }
    }
  }

  /** A file's type from its name, else from its first non-blank line; empty when neither tells. */
  static Optional<SourceType> detect(Path file) {
    Optional<SourceType> byName = SourceType.ofFileName(IngestAgent.fileName(file.getFileName().toString()));
    if (byName.isPresent()) {
      return byName;
    }
    try (BufferedReader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      String line;
      while ((line = r.readLine()) != null) {
        if (!line.isBlank()) {
          return SourceType.sniff(line);
        }
      }
    } catch (IOException e) {
      return Optional.empty();
    }
    return Optional.empty();
  }

  private static Optional<String> text(JsonNode s, String key) {
    JsonNode n = s.get(key);
    return n != null && n.isValueNode() && !n.asText().isBlank() ? Optional.of(n.asText()) : Optional.empty();
  }

  private static Map<String, String> map(String where, JsonNode s, String key) {
    JsonNode n = s.get(key);
    if (n == null) {
      return Map.of();
    }
    if (!n.isObject()) {
      throw new ConfigException(where + ": \"" + key + "\" must be a mapping");
    }
    Map<String, String> out = new LinkedHashMap<>();
    n.fields().forEachRemaining(e -> out.put(e.getKey(), e.getValue().asText()));
    return out;
  }

  /** A path glob with {agentId}/{commandId}: the fixed directory it starts from and a pattern for the rest. */
  record Template(Path root, Pattern rest, List<String> names) {

    static Template of(Path base, String path) {
      String p = path.replace('\\', '/');
      String[] segments = p.split("/");
      int firstDynamic = segments.length - 1;
      for (int i = 0; i < segments.length; i++) {
        if (segments[i].matches(".*[*?{].*")) {
          firstDynamic = i;
          break;
        }
      }
      String fixed = String.join("/", java.util.Arrays.copyOfRange(segments, 0, firstDynamic));
      Path root = fixed.isEmpty() && p.startsWith("/") ? Path.of("/") : base.resolve(fixed.isEmpty() ? "." : fixed).normalize();
      StringBuilder re = new StringBuilder();
      List<String> names = new ArrayList<>();
      String rest = String.join("/", java.util.Arrays.copyOfRange(segments, firstDynamic, segments.length));
      for (int i = 0; i < rest.length(); i++) {
        char c = rest.charAt(i);
        Matcher m = TEMPLATE.matcher(rest).region(i, rest.length());
        if (c == '{' && m.lookingAt()) {
          names.add(m.group(1));
          re.append("([^/]+?)");
          i = m.end() - 1;
        } else if (c == '*' && i + 1 < rest.length() && rest.charAt(i + 1) == '*') {
          re.append(".*");
          i++;
        } else if (c == '*') {
          re.append("[^/]*");
        } else if (c == '?') {
          re.append("[^/]");
        } else if (c == '{') {
          throw new ConfigException("path " + path + ": only {agentId} and {commandId} can stand in a path");
        } else {
          re.append(Pattern.quote(String.valueOf(c)));
        }
      }
      return new Template(root, Pattern.compile(re.toString()), names);
    }

    boolean matches(String relative) {
      return rest.matcher(relative).matches();
    }

    Map<String, String> fields(String relative) {
      Matcher m = rest.matcher(relative);
      Map<String, String> out = new LinkedHashMap<>();
      if (m.matches()) {
        for (int g = 0; g < names.size(); g++) {
          out.put(names.get(g), m.group(g + 1));
        }
      }
      return out;
    }
  }
}
