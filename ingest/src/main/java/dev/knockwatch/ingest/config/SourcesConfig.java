package dev.knockwatch.ingest.config;

import dev.knockwatch.ingest.LogLayout;
import dev.knockwatch.events.config.ConfigException;
import dev.knockwatch.events.config.YamlFile;
import dev.knockwatch.events.config.YamlNode;
import dev.knockwatch.events.config.YamlNode.Entry;
import dev.knockwatch.events.Hashes;
import dev.knockwatch.ingest.IngestAgent;
import dev.knockwatch.ingest.IngestAgent.Feed;
import dev.knockwatch.ingest.IngestAgent.FileContext;
import dev.knockwatch.events.config.Key;
import dev.knockwatch.events.config.KeyValues;
import dev.knockwatch.ingest.Formats;
import dev.knockwatch.ingest.spi.FileOptions;
import dev.knockwatch.ingest.spi.SourceFormat;
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
 *     logformat: knock                                    # a key of the squid format
 *     fields: {agentId: squid-proxy-1}                    # static fields
 *   - path: /var/log/envoy/access.json
 *     type: json
 *     mapping: {commandId: request_headers.x-command-id, authority: authority, status: response_code}
 * </pre>
 * Every source takes {@code path}, {@code type} and {@code fields}; each format declares the keys it
 * takes beside them ({@link SourceFormat#keys}). Relative paths are read from the config file's
 * directory. Every problem is reported with the file, the source's number and the exact key.
 */
public final class SourcesConfig {

  private static final Set<String> STATIC_FIELDS = Set.of("agentId", "commandId");
  private static final Pattern TEMPLATE = Pattern.compile("\\{(agentId|commandId)\\}");

  static final Key<String> PATH = Key.string("path", "path glob", null,
      "the files to read: a glob (`*`, `**`, `?`) in which `{agentId}` and `{commandId}` stand for a directory or a"
      + " name's part").required();
  static final Key<SourceFormat> TYPE = Key.of("type", "one of the formats", null,
      "the file's name, else its first line", "the format its files are read as", (node, where) -> {
        String t = node.string(where + ": type");
        if (t == null) {
          return null;
        }
        SourceFormat f = Formats.named(t).orElse(null);
        if (f == null) {
          node.problem(where + ": type \"" + t + "\" is not one of " + Formats.names());
        }
        return f;
      });
  static final Key<Map<String, String>> FIELDS = Key.of("fields", "mapping", Map.of(), "none",
      "static fields of every line: `agentId`, `commandId`", SourcesConfig::fields);
  /** The keys every source takes, whatever its format. */
  static final List<Key<?>> KEYS = List.of(PATH, TYPE, FIELDS);

  /** The top level of a sources file: its files, and the OTLP endpoint's clients ({@link OtlpConfig}). */
  static final Set<String> TOP_LEVEL = Set.of("sources", "otlp");

  private SourcesConfig() {}

  /**
   * The feeds of every file, in their order (a fleet's walls, each in a sources file of its own);
   * the problems of every file at once.
   */
  public static List<Feed> load(List<Path> files, Path checkpointDir) {
    List<Feed> feeds = new ArrayList<>();
    List<String> problems = new ArrayList<>();
    for (Path file : files) {
      try {
        feeds.addAll(load(file, checkpointDir));
      } catch (ConfigException e) {
        problems.addAll(e.problems());
      }
    }
    if (!problems.isEmpty()) {
      throw new ConfigException(problems);
    }
    return feeds;
  }

  /** The feeds of {@code file}; each keeps its checkpoints in {@code checkpointDir}. */
  public static List<Feed> load(Path file, Path checkpointDir) {
    YamlFile yaml = new YamlFile(file);
    YamlNode root = yaml.read(file).flatMap(yaml::parse).orElse(null);
    yaml.throwIfProblems();
    Map<String, Entry> top = root == null || !root.isMapping() ? Map.of() : root.mapping(null, TOP_LEVEL).orElseThrow();
    YamlNode sources = top.containsKey("sources") ? top.get("sources").value() : null;
    if (sources == null && top.containsKey("otlp")) {
      yaml.throwIfProblems();
      return List.of(); // only the OTLP endpoint's clients (OtlpConfig)
    }
    if (sources == null || !sources.isList() || sources.list("sources").isEmpty()) {
      yaml.problem(sources == null ? 1 : sources.line(), "needs a non-empty top-level \"sources:\" list"
          + " (or only an \"otlp:\" section)");
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

  /** Every key a source may hold: the common ones, then each format's. */
  static Set<String> allKeys() {
    Set<String> names = new TreeSet<>();
    KEYS.forEach(k -> names.add(k.name()));
    Formats.all().forEach(f -> f.keys().forEach(k -> names.add(k.name())));
    return names;
  }

  /** The feed of one source; null after its problems. */
  private static Feed feed(String where, YamlNode s, Path base, Path checkpointDir) {
    if (!s.isMapping()) {
      s.problem(where + " must be a mapping with at least \"path\"");
      return null;
    }
    int before = s.file().problemCount();
    Map<String, YamlNode> given = new LinkedHashMap<>();
    s.mapping(where, allKeys()).orElseThrow().forEach((k, e) -> given.put(k, e.value()));
    KeyValues common = new KeyValues(where, s, given);
    KEYS.forEach(common::read);
    SourceFormat type = common.get(TYPE);
    // a key of a format: read when the source is of it, else a problem that says whose key it is
    for (String key : given.keySet()) {
      if (KEYS.stream().anyMatch(k -> k.name().equals(key)) || (type != null && type.keys().stream().anyMatch(k -> k.name().equals(key)))) {
        continue;
      }
      String owners = String.join(" and ", Formats.all().stream()
          .filter(f -> f.keys().stream().anyMatch(k -> k.name().equals(key))).map(SourceFormat::wireName).toList());
      given.get(key).problem(where + ": \"" + key + "\" is a key of " + owners + " sources"
          + (type == null ? (common.given(TYPE) ? "" : ": give the source its \"type\"") : ", not of " + type.wireName() + " sources"));
    }
    KeyValues options = new KeyValues(where, s, given);
    if (type != null) {
      type.keys().forEach(options::read);
    }
    Map<String, String> fields = common.get(FIELDS);
    Template parsed = null;
    try {
      parsed = common.get(PATH) == null ? null : Template.of(base, common.get(PATH));
    } catch (IllegalArgumentException e) {
      common.problem(PATH, "path " + common.get(PATH) + ": " + e.getMessage());
    }
    if (s.file().problemCount() > before) {
      return null;
    }
    return feed(parsed, common.get(PATH), type, options, fields, checkpointDir);
  }

  /**
   * The feed of the files {@code path} names under {@code base} (a glob, as a source's), each read
   * as {@code type} with its keys' defaults and {@code fields} (its agent): a source made by a
   * command line, not a file ({@code up --codex-home}).
   */
  public static Feed of(Path base, String path, SourceFormat type, Map<String, String> fields, Path checkpointDir) {
    return feed(Template.of(base, path), path, type, KeyValues.defaults(type.keys()), Map.copyOf(fields), checkpointDir);
  }

  private static Feed feed(Template t, String path, SourceFormat type, KeyValues options, Map<String, String> fields,
      Path checkpointDir) {
    FileTailer tailer = new FileTailer(t.root(), p -> t.matches(t.root().relativize(p).toString().replace('\\', '/')),
        checkpointDir.resolve("checkpoints-" + Hashes.sha256Hex(t.root() + "|" + path, 6) + ".json"),
        type != null ? type.maxLineBytes() : IngestAgent.MAX_LINE_BYTES);
    Function<String, FileContext> context = LogLayout.cached(r -> {
      Map<String, String> fromPath = t.fields(r);
      SourceFormat ft = type != null ? type : detect(t.root().resolve(r)).orElse(null);
      String name = LogLayout.fileName(r);
      String stem = ft == null ? null : Formats.stem(ft, name);
      // as in the default layout <agentId>/<commandId>.<suffix>, unless the path or the config says otherwise
      String agentId = fromPath.getOrDefault("agentId", fields.getOrDefault("agentId", LogLayout.agentIdOf(r)));
      String commandId = fromPath.getOrDefault("commandId", fields.getOrDefault("commandId", stem));
      if (ft == null) {
        return new FileContext(null, null, agentId, commandId);
      }
      FileOptions fo = new FileOptions(type != null ? options : KeyValues.defaults(ft.keys()), r, stem,
          sibling -> Files.exists(t.root().resolve(sibling)));
      return new FileContext(ft, () -> ft.parser(fo), agentId, commandId);
    });
    return new Feed(tailer, context, t.root().toString().replace('\\', '/') + "/");
  }

  /** A file's format from its name, else from its first non-blank line; empty when neither tells. */
  static Optional<SourceFormat> detect(Path file) {
    Optional<SourceFormat> byName = Formats.ofFileName(LogLayout.fileName(file.getFileName().toString()));
    if (byName.isPresent()) {
      return byName;
    }
    try (BufferedReader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      String line;
      while ((line = r.readLine()) != null) {
        if (!line.isBlank()) {
          return Formats.ofFirstLine(line);
        }
      }
    } catch (IOException e) {
      return Optional.empty();
    }
    return Optional.empty();
  }

  /** {@code fields}: a mapping of the static fields. */
  private static Map<String, String> fields(YamlNode node, String where) {
    if (!node.isMapping()) {
      node.problem(where + ": \"fields\" must be a mapping");
      return null;
    }
    Map<String, String> out = new LinkedHashMap<>();
    for (Entry f : node.entries("fields")) {
      if (!STATIC_FIELDS.contains(f.name())) {
        node.problem(where + ": fields: unknown field \"" + f.name() + "\" (known: agentId, commandId)");
        continue;
      }
      String value = f.value().string(where + ": fields: " + f.name());
      if (value != null) {
        out.put(f.name(), value);
      }
    }
    return Map.copyOf(out);
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
