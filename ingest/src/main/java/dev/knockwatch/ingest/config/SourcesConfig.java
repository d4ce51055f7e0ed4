package dev.knockwatch.ingest.config;

import dev.knockwatch.ingest.LogLayout;
import dev.knockwatch.events.config.YamlFile;
import dev.knockwatch.events.config.YamlNode;
import dev.knockwatch.events.config.YamlNode.Entry;
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
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
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

  private static final Set<String> KEYS = Set.of("path", "type", "fields", "logformat", "mapping", "denyHeaders",
      "refusedStatuses");
  private static final Set<String> STATIC_FIELDS = Set.of("agentId", "commandId");
  private static final Pattern TEMPLATE = Pattern.compile("\\{(agentId|commandId)\\}");

  private SourcesConfig() {}

  /** The feeds of {@code file}; each keeps its checkpoints in {@code checkpointDir}. */
  public static List<Feed> load(Path file, Path checkpointDir) {
    YamlFile yaml = new YamlFile(file);
    YamlNode root = yaml.read(file).flatMap(yaml::parse).orElse(null);
    yaml.throwIfProblems();
    Map<String, Entry> top = root == null || !root.isMapping() ? Map.of() : root.mapping(null, Set.of("sources")).orElseThrow();
    YamlNode sources = top.containsKey("sources") ? top.get("sources").value() : null;
    if (sources == null || !sources.isList() || sources.list("sources").isEmpty()) {
      yaml.problem(sources == null ? 1 : sources.line(), "needs a non-empty top-level \"sources:\" list");
    }
    yaml.throwIfProblems();
    Path base = file.toAbsolutePath().getParent();
    List<Feed> feeds = new ArrayList<>();
    int n = 0;
    for (YamlNode s : sources.list("sources")) {
      n++;
      Optional.ofNullable(feed("source " + n, s, base, checkpointDir)).ifPresent(feeds::add);
    }
    yaml.throwIfProblems();
    return feeds;
  }

  /** The feed of one source; null after its problems. */
  private static Feed feed(String where, YamlNode s, Path base, Path checkpointDir) {
    if (!s.isMapping()) {
      s.problem(where + " must be a mapping with at least \"path\"");
      return null;
    }
    int before = s.file().problemCount();
    Map<String, Entry> keys = s.mapping(where, KEYS).orElseThrow();
    Optional<String> path = text(keys, "path");
    if (path.isEmpty()) {
      s.problem(where + ": \"path\" is required");
    }
    Optional<SourceType> type = text(keys, "type").flatMap(t -> {
      Optional<SourceType> known = SourceType.byName(t);
      if (known.isEmpty()) {
        keys.get("type").value().problem(where + ": type \"" + t + "\" is not one of " + SourceType.names());
      }
      return known;
    });
    Map<String, String> fields = map(where, keys, "fields");
    fields.keySet().forEach(k -> {
      if (!STATIC_FIELDS.contains(k)) {
        keys.get("fields").value().problem(where + ": fields: unknown field \"" + k + "\" (known: agentId, commandId)");
      }
    });
    Supplier<LineParser> parsers = type.map(t -> parserFactory(where, t, keys)).orElse(null);
    if (type.isEmpty() && !keys.containsKey("type") && (keys.containsKey("mapping") || keys.containsKey("logformat"))) {
      s.problem(where + ": \"mapping\" and \"logformat\" need an explicit \"type\"");
    }
    Template parsed = null;
    try {
      parsed = path.map(p -> Template.of(base, p)).orElse(null);
    } catch (IllegalArgumentException e) {
      keys.get("path").value().problem(where + ": path " + path.get() + ": " + e.getMessage());
    }
    if (s.file().problemCount() > before) {
      return null;
    }
    Template t = parsed;
    FileTailer tailer = new FileTailer(t.root(), p -> t.matches(t.root().relativize(p).toString().replace('\\', '/')),
        checkpointDir.resolve("checkpoints-" + Hashes.sha256Hex(t.root() + "|" + path.get(), 6) + ".json"),
        IngestAgent.MAX_LINE_BYTES);
    Function<String, FileContext> context = LogLayout.cached(r -> {
      Map<String, String> fromPath = t.fields(r);
      SourceType ft = type.orElseGet(() -> detect(t.root().resolve(r)).orElse(null));
      Supplier<LineParser> p = parsers != null ? parsers : ft == null ? null : ft::newParser;
      // as in the default layout <agentId>/<commandId>.<suffix>, unless the path or the config says otherwise
      String agentId = fromPath.getOrDefault("agentId", fields.getOrDefault("agentId", LogLayout.agentIdOf(r)));
      String commandId = fromPath.getOrDefault("commandId", fields.getOrDefault("commandId",
          ft == null ? null : LogLayout.commandIdOf(ft, LogLayout.fileName(r))));
      return new FileContext(ft, p, agentId, commandId);
    });
    return new Feed(tailer, context, t.root().toString().replace('\\', '/') + "/");
  }

  /** The parsers of an explicitly typed source; null after a problem. */
  private static Supplier<LineParser> parserFactory(String where, SourceType type, Map<String, Entry> keys) {
    switch (type) {
      case SQUID -> {
        Optional<String> format = text(keys, "logformat");
        if (format.isEmpty()) {
          return SquidAccessLogParser::new;
        }
        try {
          SquidLogFormat.of(format.get());
        } catch (IllegalArgumentException e) {
          keys.get("logformat").value().problem(where + ": logformat: " + e.getMessage());
          return null;
        }
        return () -> new SquidAccessLogParser(format.get());
      }
      case JSON -> {
        Map<String, String> mapping = map(where, keys, "mapping");
        YamlNode at = keys.containsKey("mapping") ? keys.get("mapping").value() : keys.get("type").value();
        if (mapping.isEmpty()) {
          at.problem(where + ": type json needs a \"mapping\" of event fields to JSON paths");
          return null;
        }
        Set<Integer> statuses = new HashSet<>();
        if (keys.containsKey("refusedStatuses")) {
          for (YamlNode v : keys.get("refusedStatuses").value().oneOrMany(where + ": refusedStatuses")) {
            String code = v.text();
            if (code == null || !code.matches("[0-9]{1,9}")) {
              v.problem(where + ": refusedStatuses: \"" + code + "\" is not a status code");
            } else {
              statuses.add(Integer.parseInt(code));
            }
          }
        } else {
          statuses.addAll(Set.of(403, 407));
        }
        try {
          new JsonAccessLogParser(mapping, statuses);
        } catch (IllegalArgumentException e) {
          at.problem(where + ": mapping: " + e.getMessage());
          return null;
        }
        return () -> new JsonAccessLogParser(mapping, statuses);
      }
      case PROXY_403 -> {
        if (!keys.containsKey("denyHeaders")) {
          return CurlTranscriptParser::new;
        }
        List<String> headers = new ArrayList<>();
        for (YamlNode h : keys.get("denyHeaders").value().oneOrMany(where + ": denyHeaders")) {
          String name = h.string(where + ": denyHeaders");
          if (name != null) {
            headers.add(name.toLowerCase(Locale.ROOT));
          }
        }
        return () -> new CurlTranscriptParser(headers);
      }
      default -> {
        return type::newParser;
      }
    }
  }

  /** A file's type from its name, else from its first non-blank line; empty when neither tells. */
  static Optional<SourceType> detect(Path file) {
    Optional<SourceType> byName = SourceType.ofFileName(LogLayout.fileName(file.getFileName().toString()));
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

  /** A key's non-blank string; empty when absent, blank or not a string (a problem for the last). */
  private static Optional<String> text(Map<String, Entry> keys, String key) {
    Entry e = keys.get(key);
    String text = e == null || e.value().isNull() ? null : e.value().string(key);
    return text != null && !text.isBlank() ? Optional.of(text) : Optional.empty();
  }

  /** A mapping of strings; empty when absent, a problem when it is not a mapping. */
  private static Map<String, String> map(String where, Map<String, Entry> keys, String key) {
    Entry e = keys.get(key);
    if (e == null) {
      return Map.of();
    }
    if (!e.value().isMapping()) {
      e.value().problem(where + ": \"" + key + "\" must be a mapping");
      return Map.of();
    }
    Map<String, String> out = new LinkedHashMap<>();
    for (Entry f : e.value().entries(key)) {
      String value = f.value().string(where + ": " + key + ": " + f.name());
      if (value != null) {
        out.put(f.name(), value);
      }
    }
    return out;
  }

  /** A path glob with {agentId}/{commandId}: the fixed directory it starts from and a pattern for the rest. */
  record Template(Path root, Pattern rest, List<String> names) {

    /** The template of {@code path}; an IllegalArgumentException says what is wrong with it. */
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
          throw new IllegalArgumentException("only {agentId} and {commandId} can stand in a path");
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
