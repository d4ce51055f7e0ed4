package dev.knockwatch.streams.api;

import static dev.knockwatch.streams.api.Answers.error;
import static dev.knockwatch.streams.api.Answers.intParam;
import static dev.knockwatch.streams.api.Answers.query;
import static dev.knockwatch.streams.api.Answers.send;
import static dev.knockwatch.streams.api.Answers.sendBytes;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpContext;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsServer;
import dev.knockwatch.events.EventKey;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.rules.Policy;
import dev.knockwatch.streams.timeline.CommandSummary;
import dev.knockwatch.streams.timeline.TimelineIndex;
import dev.knockwatch.streams.timeline.TimelineIndex.AlertRow;
import dev.knockwatch.streams.timeline.TimelineIndex.CommandRow;
import dev.knockwatch.streams.timeline.TimelineProcessor;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Executors;
import java.util.function.Supplier;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.KeyQueryMetadata;
import org.apache.kafka.streams.StoreQueryParameters;
import org.apache.kafka.streams.TaskMetadata;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.errors.InvalidStateStoreException;
import org.apache.kafka.streams.state.HostInfo;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.QueryableStoreTypes;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The query API over the timeline app's stores (JDK HTTP server): {@code GET /api/commands/{id}}
 * (a command's summary, alerts and kept events), {@code GET /api/commands?agent=&role=&since=&limit=}
 * (recent commands, newest first) and {@code GET /api/alerts?status=} (the commands' alerts); the
 * lists read each local partition's {@link TimelineIndex} ({@link IndexLists}) and gather every
 * instance's part. This class routes the requests, checks the token and reads the stores; the
 * rest is by concern: {@link Peers} (a command another instance owns, a list's other parts),
 * {@link ConsoleFiles} (the console's static files at {@code /}), {@link Health} ({@code /-/}),
 * {@link Answers} (how an answer is written), {@link DiscoveryAnswers} (the allowlist and the overview). Every request needs {@code Authorization: Bearer <token>},
 * compared in constant time; the token is never logged. A request naming a {@code Host} the API
 * is not served on is answered 421 before its token is read ({@link AllowedHosts}). During a rebalance the answer is 503
 * with {@code Retry-After}, never a wrong empty one.
 */
public final class QueryApi implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(QueryApi.class);

  /** Threads that read requests and answer them: a few idle sockets cannot hold them all. */
  public static final int THREADS = 64;
  /** Requests of one client address handled at once ({@link PerClientLimit}). */
  public static final int MAX_IN_FLIGHT_PER_CLIENT = PerClientLimit.MAX_IN_FLIGHT;

  static {
    serverDefaults();
  }

  /**
   * The JDK HTTP server's settings, read once per JVM when its first server starts (so
   * {@code knockwatch} sets them first thing, before the metrics endpoint's server): a request's
   * headers and body must arrive within 5 s and its answer leave within 30 s, else the connection
   * is closed; at most 512 connections at once. A setting given on the command line stays.
   */
  public static void serverDefaults() {
    // The JDK server sends headers and body as two small writes; without TCP_NODELAY, Nagle holds
    // the second until the client's delayed ACK (40 ms), which was the whole median latency.
    System.setProperty("sun.net.httpserver.nodelay", "true");
    setIfAbsent("sun.net.httpserver.maxReqTime", "5");
    setIfAbsent("sun.net.httpserver.maxRspTime", "30");
    setIfAbsent("jdk.httpserver.maxConnections", "512");
  }

  private static void setIfAbsent(String key, String value) {
    if (System.getProperty(key) == null) {
      System.setProperty(key, value);
    }
  }

  private final KafkaStreams streams;
  private final byte[] token;
  private final HostInfo self;
  private final HttpServer server;
  private final PerClientLimit perClient = new PerClientLimit();
  private final NoSniff noSniff = new NoSniff();
  private final AllowedHosts hosts;
  /** https when this API serves TLS. */
  private final String scheme;
  private final Peers peers;
  private final DiscoveryAnswers discovery;
  private final Health health;

  /** The policy in force (reloads included): what a role allows, what a rule detects; null when unset. */
  private volatile Supplier<Policy> policy = () -> null;

  /** Sets where answers find the policy in force: a command's role's hosts, the allowlist's roles and rules. */
  public void policy(Supplier<Policy> inForce) {
    this.policy = inForce;
  }

  /**
   * @param self this instance's {@code application.server} (host:port of this API), or null when
   *     it runs alone
   */
  public QueryApi(KafkaStreams streams, String token, String bind, int port, HostInfo self) throws IOException {
    this(streams, token, bind, port, self, null);
  }

  /**
   * As above; with {@code tls}, the API serves HTTPS with its key, and reaches the other instances
   * over HTTPS, trusting only the certificates its trust material trusts (host names verified).
   */
  public QueryApi(KafkaStreams streams, String token, String bind, int port, HostInfo self, Tls tls) throws IOException {
    this(streams, token, bind, port, self, tls, List.of());
  }

  /**
   * As above; the API and the console also answer requests whose {@code Host} is one of
   * {@code alsoAllowedHosts} ({@link AllowedHosts}: {@code name}, {@code name:port} or {@code *}),
   * beside the names and addresses they are served on. An IllegalArgumentException names an
   * entry that is not a host.
   */
  public QueryApi(KafkaStreams streams, String token, String bind, int port, HostInfo self, Tls tls,
      Collection<String> alsoAllowedHosts) throws IOException {
    alsoAllowedHosts.forEach(QueryApi::allowedHost); // a wrong entry fails before anything listens
    this.streams = streams;
    this.token = token.getBytes(StandardCharsets.UTF_8);
    this.self = self;
    HttpClient.Builder client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2));
    if (tls == null) {
      this.server = HttpServer.create(new InetSocketAddress(bind, port), 0);
      this.scheme = "http";
    } else {
      HttpsServer https = HttpsServer.create(new InetSocketAddress(bind, port), 0);
      https.setHttpsConfigurator(new HttpsConfigurator(tls.server()));
      this.server = https;
      this.scheme = "https";
      client.sslContext(tls.client());
    }
    this.hosts = new AllowedHosts(bind, server.getAddress().getPort(), self == null ? null : self.host(),
        self == null ? 0 : self.port(), tls != null, alsoAllowedHosts);
    log.info("query API on {}://{}:{} answers to Host {}", scheme, bind, server.getAddress().getPort(), hosts.describe());
    this.peers = new Peers(streams, self, scheme, client.build());
    this.discovery = new DiscoveryAnswers(peers, this::stores, () -> policy.get());
    this.health = new Health(streams, () -> commandsStore(null).approximateNumEntries());
    guard(server.createContext("/api/", this::handle));
    guard(server.createContext("/-/", health));
    guard(server.createContext("/", new ConsoleFiles()));
    server.setExecutor(Executors.newFixedThreadPool(THREADS, r -> {
      Thread t = new Thread(r, "knockwatch-api");
      t.setDaemon(true);
      return t;
    }));
    server.start();
  }

  /**
   * An entry of the names the API also answers to, in its normal form ({@code name:port},
   * {@code name:*} or {@code *}); an IllegalArgumentException says why it is not a host.
   */
  public static String allowedHost(String entry) {
    return AllowedHosts.parse(entry);
  }

  /**
   * Another condition of {@code /-/ready} beside the timeline's: null when met, else why not
   * (detection, which runs apart, not RUNNING).
   */
  public void readyAlso(Supplier<String> notReady) {
    health.also(notReady);
  }

  /** {@code https} when the API serves TLS, else {@code http}. */
  public String scheme() {
    return scheme;
  }

  public int port() {
    return server.getAddress().getPort();
  }

  /**
   * Mounts another handler under {@code path} (the silences, from the notifier), behind the same
   * bearer token check.
   */
  public void mount(String path, HttpHandler handler) {
    HttpHandler guarded = ex -> {
      if (refusedWithoutToken(ex)) {
        ex.close();
        return;
      }
      deprecatedPath(ex);
      handler.handle(ex);
    };
    guard(server.createContext(path, guarded));
    if (path.startsWith("/api/")) {
      guard(server.createContext(V1 + path.substring("/api/".length()), guarded));
    }
  }

  /**
   * What every path passes before its handler, in order: {@link NoSniff}, {@link AllowedHosts}
   * (a Host the API is not served on: 421), then {@link PerClientLimit}.
   */
  private void guard(HttpContext context) {
    context.getFilters().add(noSniff);
    context.getFilters().add(hosts);
    context.getFilters().add(perClient);
  }

  /** The API's versioned prefix; the same routes without it are kept as aliases for one release. */
  public static final String V1 = "/api/v1/";

  /** {@code /api/v1/commands} and its alias {@code /api/commands} → {@code /api/commands}. */
  private static String unversioned(String path) {
    return path.startsWith(V1) ? "/api/" + path.substring(V1.length()) : path;
  }

  /** An alias path answers as its /api/v1/ route does, and says which one replaces it (RFC 8594). */
  private static void deprecatedPath(HttpExchange ex) {
    String path = ex.getRequestURI().getRawPath();
    if (!path.startsWith(V1)) {
      ex.getResponseHeaders().set("Deprecation", "true");
      ex.getResponseHeaders().set("Link", "<" + V1 + path.substring("/api/".length()) + ">; rel=\"successor-version\"");
    }
  }

  /** The OpenAPI document of this API, as shipped (no data in it: served without the token). */
  private void openApi(HttpExchange ex) throws IOException {
    try (var in = QueryApi.class.getResourceAsStream("/api/openapi.json")) {
      sendBytes(ex, 200, in.readAllBytes());
    }
  }

  private void handle(HttpExchange ex) throws IOException {
    try {
      if (ex.getRequestURI().getRawPath().equals(V1 + "openapi.json") && "GET".equals(ex.getRequestMethod())) {
        openApi(ex);
        return;
      }
      if (refusedWithoutToken(ex)) {
        return;
      }
      if (!"GET".equals(ex.getRequestMethod())) {
        send(ex, 405, error("only GET"));
        return;
      }
      deprecatedPath(ex);
      String path = unversioned(ex.getRequestURI().getRawPath());
      Map<String, String> query = query(ex.getRequestURI());
      if (path.startsWith("/api/commands/")) {
        command(ex, URLDecoder.decode(path.substring("/api/commands/".length()), StandardCharsets.UTF_8));
      } else if (path.equals("/api/commands")) {
        commands(ex, query);
      } else if (path.equals("/api/alerts")) {
        alerts(ex, query);
      } else if (path.equals("/api/allowlist")) {
        discovery.allowlist(ex, query);
      } else if (path.equals("/api/overview")) {
        discovery.overview(ex, query);
      } else {
        send(ex, 404, error("no such endpoint"));
      }
    } catch (InvalidStateStoreException e) {
      ex.getResponseHeaders().add("Retry-After", "1");
      send(ex, 503, error("the timeline is rebalancing; try again"));
    } catch (IndexBuilding e) {
      ex.getResponseHeaders().add("Retry-After", "5");
      send(ex, 503, error(e.getMessage()));
    } catch (Answers.BadRequest e) {
      send(ex, 400, error(e.getMessage()));
    } catch (RuntimeException e) {
      log.warn("query failed: {}", e.toString());
      send(ex, 500, error("query failed"));
    } finally {
      ex.close();
    }
  }

  /** Answers 401 when the request lacks the bearer token; true when it did. */
  private boolean refusedWithoutToken(HttpExchange ex) throws IOException {
    if (authorized(ex.getRequestHeaders().getFirst("Authorization"))) {
      return false;
    }
    ex.getResponseHeaders().add("WWW-Authenticate", "Bearer realm=\"knockwatch\"");
    send(ex, 401, error("a bearer token is required (Authorization: Bearer <token>)"));
    return true;
  }

  /** Constant time: how much of a wrong token was right takes no longer to find out. */
  private boolean authorized(String header) {
    if (header == null || !header.startsWith("Bearer ")) {
      return false;
    }
    return MessageDigest.isEqual(token, header.substring("Bearer ".length()).strip().getBytes(StandardCharsets.UTF_8));
  }

  private void command(HttpExchange ex, String commandId) throws IOException {
    // a command id, or the agent's or session's key a wall's refusals that name no command are kept under
    Optional<String> problem = EventKey.problem(commandId);
    if (problem.isPresent()) {
      throw new Answers.BadRequest("not a command id, nor an agent's or session's key: " + problem.get());
    }
    if (streams.state() != KafkaStreams.State.RUNNING) {
      throw new InvalidStateStoreException("state " + streams.state());
    }
    KeyQueryMetadata where = streams.queryMetadataForKey(TimelineProcessor.COMMANDS, commandId,
        Serdes.String().serializer());
    if (self != null && where != null && where.activeHost() != null && !where.activeHost().equals(self)
        && where.activeHost().port() > 0 && !Peers.forwarded(ex)) {
      peers.forward(ex, where.activeHost());
      return;
    }
    // the command's own partition: while its task is still restoring here, that is a 503, not a
    // 404 from the stores that happen to be ready
    Integer partition = where == null || where.partition() < 0 ? null : where.partition();
    CommandSummary s = commandsStore(partition).get(commandId);
    if (s == null) {
      send(ex, 404, error("unknown command " + commandId));
      return;
    }
    ObjectNode out = Json.MAPPER.valueToTree(s);
    out.remove("targetSketch"); // the state behind distinctTargets, not for readers
    ArrayNode events = out.putArray("timeline");
    String[] range = TimelineProcessor.eventRange(commandId);
    try (KeyValueIterator<String, ViolationEvent> it = eventsStore(partition).range(range[0], range[1])) {
      it.forEachRemaining(kv -> events.add(Json.MAPPER.valueToTree(kv.value)));
    }
    out.put("omitted", s.events() - events.size());
    Policy inForce = policy.get();
    if (s.role() != null && inForce != null) {
      ArrayNode hosts = out.putArray("roleAllows");
      inForce.role(s.role()).hosts().forEach(h -> hosts.add(h.text()));
    }
    send(ex, 200, out);
  }

  /** The newest {@code limit} commands that pass the {@link ListFilter}, from this instance's indexes and the others'. */
  private void commands(HttpExchange ex, Map<String, String> q) throws IOException {
    int limit = intParam(q, "limit", 50);
    ListFilter filter = ListFilter.of(q); // a malformed parameter is a 400 before anything is read
    list(ex, "commands", IndexLists.commands(indexes(), filter, limit), CommandRow.class, ListFilter.COMMAND_ORDER, limit);
  }

  /** The first {@code limit} alerts, in {@link ListFilter#ALERT_ORDER}, that pass the filter, from every instance. */
  private void alerts(HttpExchange ex, Map<String, String> q) throws IOException {
    int limit = intParam(q, "limit", Answers.MAX_LIMIT);
    ListFilter filter = ListFilter.of(q);
    list(ex, "alerts", IndexLists.alerts(indexes(), filter, limit), AlertRow.class, ListFilter.ALERT_ORDER, limit);
  }

  /** This instance's rows and the other instances' ({@link Peers#fromOthers}), in {@code order}, the first {@code limit} under {@code field}. */
  private <T> void list(HttpExchange ex, String field, List<T> local, Class<T> type, Comparator<T> order, int limit)
      throws IOException {
    List<T> rows = new ArrayList<>(local);
    for (JsonNode row : peers.fromOthers(ex, field)) {
      rows.add(Json.MAPPER.treeToValue(row, type));
    }
    rows.sort(order);
    ObjectNode out = Json.MAPPER.createObjectNode();
    out.set(field, Json.MAPPER.valueToTree(IndexLists.first(rows, limit)));
    send(ex, 200, out);
  }

  /**
   * The list index of each partition this instance serves. A partition still restoring, or whose
   * index is still being built, makes the list 503: a list with a hole would look complete.
   */
  private List<ReadOnlyKeyValueStore<String, String>> indexes() {
    List<ReadOnlyKeyValueStore<String, String>> out = stores(TimelineIndex.STORE);
    for (ReadOnlyKeyValueStore<String, String> index : out) {
      if (index.get(TimelineIndex.BUILT) == null) {
        throw new IndexBuilding();
      }
    }
    return out;
  }

  /** The store {@code name} of each partition this instance serves (one still restoring: a 503, never a part left out). */
  <V> List<ReadOnlyKeyValueStore<String, V>> stores(String name) {
    if (streams.state() != KafkaStreams.State.RUNNING) {
      throw new InvalidStateStoreException("state " + streams.state());
    }
    Set<Integer> partitions = new TreeSet<>();
    for (ThreadMetadata thread : streams.metadataForLocalThreads()) {
      for (TaskMetadata task : thread.activeTasks()) {
        task.topicPartitions().stream().filter(tp -> tp.topic().equals(Topics.VIOLATIONS.name()))
            .forEach(tp -> partitions.add(tp.partition()));
      }
    }
    List<ReadOnlyKeyValueStore<String, V>> out = new ArrayList<>();
    for (int p : partitions) {
      out.add(streams.store(StoreQueryParameters.fromNameAndType(name, QueryableStoreTypes.<String, V>keyValueStore())
          .withPartition(p)));
    }
    return out;
  }

  /** A partition's list index is still being built from its commands (a store from before the index). */
  private static final class IndexBuilding extends RuntimeException {
    IndexBuilding() {
      super("the timeline's list indexes are being built from its commands; try again", null, false, false);
    }
  }

  /** The store of one partition (an InvalidStateStoreException while it is not ready here), or of all with null. */
  private ReadOnlyKeyValueStore<String, CommandSummary> commandsStore(Integer partition) {
    StoreQueryParameters<ReadOnlyKeyValueStore<String, CommandSummary>> q = StoreQueryParameters.fromNameAndType(
        TimelineProcessor.COMMANDS, QueryableStoreTypes.<String, CommandSummary>keyValueStore());
    return streams.store(partition == null ? q : q.withPartition(partition));
  }

  private ReadOnlyKeyValueStore<String, ViolationEvent> eventsStore(Integer partition) {
    StoreQueryParameters<ReadOnlyKeyValueStore<String, ViolationEvent>> q = StoreQueryParameters.fromNameAndType(
        TimelineProcessor.EVENTS, QueryableStoreTypes.<String, ViolationEvent>keyValueStore());
    return streams.store(partition == null ? q : q.withPartition(partition));
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
