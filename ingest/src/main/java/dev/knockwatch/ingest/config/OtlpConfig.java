package dev.knockwatch.ingest.config;

import dev.knockwatch.events.AgentId;
import dev.knockwatch.events.config.ConfigException;
import dev.knockwatch.events.config.YamlFile;
import dev.knockwatch.events.config.YamlNode;
import dev.knockwatch.events.config.YamlNode.Entry;
import dev.knockwatch.ingest.OtlpIngest;
import dev.knockwatch.ingest.otlp.OtlpClients;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The OTLP endpoint's part of a sources file, beside {@code sources:}:
 * <pre>
 * otlp:
 *   listen: 0.0.0.0:4318              # host:port (default 127.0.0.1:4318)
 *   maxBodyBytes: 16777216            # a request's body, inflated (default 16 MiB)
 *   recordsPerSecond: 2000            # each client's records a second (default 2000) ...
 *   burst: 20000                      # ... and at once (default 20000)
 *   clients:                          # each exporting host, and the agent it is
 *     - {agent: dev-laptop-7, tokenSha256: "9f86d0…"}         # the SHA-256 of its bearer token
 *     - {agent: ci-runner-1, subject: "CN=ci-runner-1"}        # its client certificate's subject
 *     - {agent: ci-runner-2, certificateSha256: "3a7bd3…"}     # its client certificate, pinned
 * </pre>
 * Every problem is reported with the file, its line and the key, as the sources' are.
 */
public record OtlpConfig(String bind, int port, int maxBodyBytes, double recordsPerSecond, double burst,
    List<OtlpClients.Client> clients) {

  private static final Set<String> KEYS = Set.of("listen", "maxBodyBytes", "recordsPerSecond", "burst", "clients");
  private static final Set<String> CLIENT_KEYS = Set.of("agent", "tokenSha256", "certificateSha256", "subject");
  private static final Pattern SHA256 = Pattern.compile("[0-9a-fA-F]{64}");
  private static final Pattern LISTEN = Pattern.compile("(\\[[0-9a-fA-F:.]+\\]|[A-Za-z0-9.-]+):(\\d{1,5})");

  public static OtlpConfig defaults() {
    return new OtlpConfig("127.0.0.1", OtlpIngest.DEFAULT_PORT, OtlpIngest.DEFAULT_MAX_BODY_BYTES,
        OtlpIngest.DEFAULT_RECORDS_PER_SECOND, OtlpIngest.DEFAULT_BURST, List.of());
  }

  /**
   * The one {@code otlp:} among {@code files}; empty when none has one. Two files with one each is
   * a problem (one endpoint, one list of clients), as is any problem of either.
   */
  public static Optional<OtlpConfig> load(List<Path> files) {
    Optional<OtlpConfig> found = Optional.empty();
    Path from = null;
    for (Path file : files) {
      Optional<OtlpConfig> c = load(file);
      if (c.isPresent() && found.isPresent()) {
        throw new ConfigException(file + ": an \"otlp:\" section, as " + from + " has: the endpoint and its clients"
            + " are one section, in one of the sources files");
      }
      if (c.isPresent()) {
        found = c;
        from = file;
      }
    }
    return found;
  }

  /** The {@code otlp:} of {@code file}; empty when it has none. A problem throws, with every other one of the file. */
  public static Optional<OtlpConfig> load(Path file) {
    YamlFile yaml = new YamlFile(file);
    YamlNode root = yaml.read(file).flatMap(yaml::parse).orElse(null);
    yaml.throwIfProblems();
    if (root == null || !root.isMapping()) {
      return Optional.empty();
    }
    Map<String, Entry> top = root.mapping(null, SourcesConfig.TOP_LEVEL).orElseThrow();
    yaml.throwIfProblems();
    if (!top.containsKey("otlp")) {
      return Optional.empty();
    }
    YamlNode n = top.get("otlp").value();
    OtlpConfig c = read(n);
    yaml.throwIfProblems();
    return Optional.of(c);
  }

  private static OtlpConfig read(YamlNode n) {
    OtlpConfig d = defaults();
    if (!n.isMapping()) {
      n.problem("otlp must be a mapping (listen, maxBodyBytes, recordsPerSecond, burst, clients)");
      return d;
    }
    Map<String, Entry> m = n.mapping("otlp", KEYS).orElseThrow();
    String bind = d.bind();
    int port = d.port();
    if (m.containsKey("listen")) {
      YamlNode v = m.get("listen").value();
      String listen = v.string("otlp: listen");
      java.util.regex.Matcher lm = listen == null ? null : LISTEN.matcher(listen.strip());
      if (lm == null || !lm.matches() || Integer.parseInt(lm.group(2)) > 65535) {
        v.problem("otlp: listen \"" + listen + "\" is not host:port (like 127.0.0.1:4318, 0.0.0.0:4318)");
      } else {
        bind = lm.group(1).replace("[", "").replace("]", "");
        port = Integer.parseInt(lm.group(2));
      }
    }
    int maxBody = (int) number(m, "maxBodyBytes", d.maxBodyBytes(), 1024, Integer.MAX_VALUE);
    double rate = number(m, "recordsPerSecond", d.recordsPerSecond(), 1, 1e9);
    double burst = number(m, "burst", d.burst(), 1, 1e9);
    List<OtlpClients.Client> clients = new ArrayList<>();
    if (m.containsKey("clients")) {
      YamlNode list = m.get("clients").value();
      int i = 0;
      for (YamlNode c : list.list("otlp: clients")) {
        i++;
        client("otlp: clients entry " + i, c).ifPresent(clients::add);
      }
    }
    return new OtlpConfig(bind, port, maxBody, rate, burst, List.copyOf(clients));
  }

  private static Optional<OtlpClients.Client> client(String where, YamlNode c) {
    if (!c.isMapping()) {
      c.problem(where + " must be a mapping with agent and one of tokenSha256, certificateSha256, subject");
      return Optional.empty();
    }
    Map<String, Entry> m = c.mapping(where, CLIENT_KEYS).orElseThrow();
    String agent = m.containsKey("agent") ? m.get("agent").value().string(where + ": agent") : null;
    if (agent == null) {
      c.problem(where + ": agent is missing: the agent this client's records are");
      return Optional.empty();
    }
    Optional<String> bad = AgentId.problem(agent);
    if (bad.isPresent()) {
      m.get("agent").value().problem(where + ": agent \"" + agent + "\": " + bad.get());
      return Optional.empty();
    }
    String token = hex(m, "tokenSha256", where);
    String cert = hex(m, "certificateSha256", where);
    String subject = m.containsKey("subject") ? m.get("subject").value().string(where + ": subject") : null;
    int given = (token != null ? 1 : 0) + (cert != null ? 1 : 0) + (subject != null ? 1 : 0);
    if (given != 1) {
      c.problem(where + ": give exactly one of tokenSha256 (the SHA-256 of its bearer token, in hex),"
          + " certificateSha256 (of its client certificate) or subject (its certificate's subject)");
      return Optional.empty();
    }
    return Optional.of(new OtlpClients.Client(agent, token, cert, subject));
  }

  private static String hex(Map<String, Entry> m, String key, String where) {
    if (!m.containsKey(key)) {
      return null;
    }
    YamlNode v = m.get(key).value();
    String s = v.string(where + ": " + key);
    if (s == null || !SHA256.matcher(s).matches()) {
      v.problem(where + ": " + key + " is not a SHA-256 in hex (64 of 0-9, a-f)");
      return null;
    }
    return s.toLowerCase(java.util.Locale.ROOT);
  }

  private static double number(Map<String, Entry> m, String key, double fallback, double min, double max) {
    if (!m.containsKey(key)) {
      return fallback;
    }
    YamlNode v = m.get(key).value();
    String s = v.string("otlp: " + key);
    try {
      double d = Double.parseDouble(s == null ? "" : s.strip());
      if (d >= min && d <= max) {
        return d;
      }
    } catch (NumberFormatException e) {
      // said below
    }
    v.problem("otlp: " + key + " \"" + s + "\" is not a number from " + (long) min + " to " + (long) max);
    return fallback;
  }
}
