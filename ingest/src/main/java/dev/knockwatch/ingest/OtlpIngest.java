package dev.knockwatch.ingest;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsExchange;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import dev.knockwatch.events.RejectedLine;
import dev.knockwatch.events.Redactor;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.ingest.otlp.OtlpClients;
import dev.knockwatch.ingest.otlp.OtlpHttp;
import dev.knockwatch.ingest.otlp.OtlpJson;
import dev.knockwatch.ingest.otlp.OtlpLogs;
import dev.knockwatch.ingest.otlp.RateLimit;
import dev.knockwatch.ingest.otlp.TelemetryFormats;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.Rejection;
import dev.knockwatch.ingest.spi.SourceFormat;
import dev.knockwatch.ingest.spi.SourceLine;
import dev.knockwatch.ingest.tail.TailedLine;
import io.prometheus.client.Counter;
import io.prometheus.client.Histogram;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLPeerUnverifiedException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ingest with OTLP/HTTP as its source: {@code POST /v1/logs} from an agent's harness (Codex's and
 * Claude Code's OpenTelemetry exporters, or a Collector that forwards them). Each request is
 * authenticated (a bearer token or a client certificate, {@link OtlpClients}: the agent is the
 * client's, never an attribute), bounded (its body, {@link OtlpHttp}; its client's records a
 * second, {@link RateLimit}), decoded ({@link OtlpLogs}, {@link OtlpJson}), and each record read by
 * the format that reads it ({@link TelemetryFormats}, one reader per client) into events and
 * rejected records as a file's lines are ({@link LineSender}). The answer waits for Kafka: 200 only
 * once every record is stored, so an exporter's retry after a failure (503, Retry-After) is the
 * at-least-once path, and the records' ids (from their content) make a record sent twice count
 * once. Records it could not read are rejected lines on {@code knockwatch.violations.rejected}
 * and counted in the answer's {@code partial_success}; a body it cannot decode is one rejected line
 * and a 400.
 */
public final class OtlpIngest implements AutoCloseable {

  public static final String PATH = "/v1/logs";
  public static final int DEFAULT_PORT = 4318;
  public static final int DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024;
  public static final double DEFAULT_RECORDS_PER_SECOND = 2_000;
  public static final double DEFAULT_BURST = 20_000;
  static final Duration ANSWER_TIMEOUT = Duration.ofSeconds(30);
  private static final int THREADS = 4;
  private static final int MAX_MESSAGE_REASONS = 3;
  private static final int KEPT_BODY_BYTES = 4096;
  private static final Logger log = LoggerFactory.getLogger(OtlpIngest.class);

  static final Counter REQUESTS = Counter.build().name("knockwatch_otlp_requests_total")
      .help("OTLP export requests, by outcome: accepted, partial (some records rejected), unauthenticated,"
          + " too-large, unsupported, bad-request, throttled, unavailable (Kafka did not take them).")
      .labelNames("outcome").register();
  static final Counter RECORDS = Counter.build().name("knockwatch_otlp_records_total")
      .help("OTLP log records taken, by the agent whose client sent them and outcome (read, rejected).")
      .labelNames("agent", "outcome").register();
  static final Histogram BODY_BYTES = Histogram.build().name("knockwatch_otlp_request_bytes")
      .help("OTLP request bodies, inflated.").exponentialBuckets(256, 4, 9).register();
  static final Histogram ANSWER_SECONDS = Histogram.build().name("knockwatch_otlp_answer_seconds")
      .help("Time from a request's arrival to its answer (Kafka's acknowledgement included).")
      .buckets(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30).register();

  /**
   * @param tls HTTPS with this context, client certificates asked for (null: plain HTTP)
   * @param recordsPerSecond each client's records a second, {@code burst} at once
   */
  public record Settings(String bind, int port, SSLContext tls, OtlpClients clients, int maxBodyBytes,
      double recordsPerSecond, double burst) {

    public static Settings plain(String bind, int port, OtlpClients clients) {
      return new Settings(bind, port, null, clients, DEFAULT_MAX_BODY_BYTES, DEFAULT_RECORDS_PER_SECOND, DEFAULT_BURST);
    }
  }

  private final Settings settings;
  private final EventSink sink;
  private final String ingestHost;
  private final Clock clock;
  private final LineSender sender;
  private final RateLimit rate;
  private final HttpServer server;
  private final ExecutorService executor;
  /** Each client's readers, by agent: its records are read in the order it sent them. */
  private final Map<String, TelemetryFormats> readers = new ConcurrentHashMap<>();
  private final java.util.Set<String> unknownSaid = ConcurrentHashMap.newKeySet();

  public OtlpIngest(Settings settings, EventSink sink, String ingestHost, Clock clock) throws IOException {
    this.settings = settings;
    this.sink = sink;
    this.ingestHost = ingestHost;
    this.clock = clock;
    this.sender = new LineSender(sink, ingestHost, clock);
    this.rate = new RateLimit(settings.recordsPerSecond(), settings.burst(), clock);
    InetSocketAddress at = new InetSocketAddress(settings.bind(), settings.port());
    if (settings.tls() == null) {
      server = HttpServer.create(at, 0);
    } else {
      HttpsServer https = HttpsServer.create(at, 0);
      https.setHttpsConfigurator(new HttpsConfigurator(settings.tls()) {
        @Override
        public void configure(HttpsParameters params) {
          SSLParameters p = getSSLContext().getDefaultSSLParameters();
          p.setWantClientAuth(true);
          params.setSSLParameters(p);
        }
      });
      server = https;
    }
    executor = Executors.newFixedThreadPool(THREADS, r -> {
      Thread t = new Thread(r, "knockwatch-otlp");
      t.setDaemon(true);
      return t;
    });
    server.setExecutor(executor);
    server.createContext(PATH, this::handle);
    server.createContext("/", ex -> answer(ex, 404, OtlpHttp.Encoding.PROTOBUF, OtlpHttp.status(
        OtlpHttp.Encoding.PROTOBUF, "not found: OTLP logs go to " + PATH), "not-found"));
    server.start();
  }

  /** The port it listens on (the one asked for, or the one picked for 0). */
  public int port() {
    return server.getAddress().getPort();
  }

  public String url() {
    return (settings.tls() == null ? "http" : "https") + "://" + settings.bind() + ":" + port() + PATH;
  }

  private void handle(HttpExchange ex) throws IOException {
    long started = System.nanoTime();
    try (ex) {
      OtlpHttp.Encoding enc = OtlpHttp.Encoding.of(ex.getRequestHeaders().getFirst("Content-Type"));
      OtlpHttp.Encoding answerIn = enc == null ? OtlpHttp.Encoding.PROTOBUF : enc;
      if (!"POST".equals(ex.getRequestMethod())) {
        ex.getResponseHeaders().set("Allow", "POST");
        answer(ex, 405, answerIn, OtlpHttp.status(answerIn, "OTLP logs are POSTed"), "unsupported");
        return;
      }
      Optional<String> agent = who(ex);
      if (agent.isEmpty()) {
        String from = ex.getRemoteAddress().getAddress().getHostAddress();
        if (unknownSaid.size() < 1000 && unknownSaid.add(from)) {
          log.warn("OTLP: a request from {} with no token or client certificate this endpoint knows (refused;"
              + " later ones from there are only counted)", from);
        }
        drain(ex.getRequestBody(), settings.maxBodyBytes());
        ex.getResponseHeaders().set("WWW-Authenticate", "Bearer");
        answer(ex, 401, answerIn, OtlpHttp.status(answerIn, "no token or client certificate this endpoint knows:"
            + " send Authorization: Bearer <token> (knockwatch codex settings prints one)"), "unauthenticated");
        return;
      }
      if (enc == null) {
        drain(ex.getRequestBody(), settings.maxBodyBytes());
        answer(ex, 415, answerIn, OtlpHttp.status(answerIn, "Content-Type must be application/x-protobuf or"
            + " application/json"), "unsupported");
        return;
      }
      byte[] body;
      try {
        String length = ex.getRequestHeaders().getFirst("Content-Length");
        body = OtlpHttp.body(ex.getRequestBody(), length == null ? -1 : parseLong(length),
            ex.getRequestHeaders().getFirst("Content-Encoding"), settings.maxBodyBytes());
      } catch (OtlpHttp.TooLarge e) {
        // read to its end (up to a bound), so that the exporter reads the 413 and does not send it again
        drain(ex.getRequestBody(), DRAINED_BYTES);
        answer(ex, 413, enc, OtlpHttp.status(enc, e.getMessage()), "too-large");
        return;
      } catch (OtlpHttp.Unsupported e) {
        answer(ex, 415, enc, OtlpHttp.status(enc, e.getMessage()), "unsupported");
        return;
      }
      BODY_BYTES.observe(body.length);
      export(ex, enc, agent.get(), body);
    } catch (RuntimeException e) { // a bug met by one request: the exporter may send it again
      log.error("OTLP: a request failed", e);
      try {
        answer(ex, 500, OtlpHttp.Encoding.PROTOBUF, OtlpHttp.status(OtlpHttp.Encoding.PROTOBUF,
            "the endpoint failed on this request"), "failed");
      } catch (IOException | RuntimeException ignored) {
        // the answer may be half sent already
      }
    } finally {
      ANSWER_SECONDS.observe((System.nanoTime() - started) / 1e9);
    }
  }

  private void export(HttpExchange ex, OtlpHttp.Encoding enc, String agent, byte[] body) throws IOException {
    OtlpLogs.Decoded decoded;
    try {
      decoded = enc == OtlpHttp.Encoding.JSON ? OtlpJson.read(body) : OtlpLogs.records(OtlpLogs.fromProtobuf(body));
    } catch (OtlpLogs.BadRequest e) {
      // nothing read is dropped unsaid: the body's start is kept with why
      String kept = enc == OtlpHttp.Encoding.JSON
          ? new String(body, 0, Math.min(body.length, KEPT_BODY_BYTES), java.nio.charset.StandardCharsets.UTF_8)
          : "base64:" + Base64.getEncoder().encodeToString(java.util.Arrays.copyOf(body, Math.min(body.length,
              KEPT_BODY_BYTES)));
      List<Outgoing> out = List.of(new Outgoing.Rejected(new RejectedLine(origin(agent), 0, ingestHost,
          Rejection.UNPARSEABLE.code(), Sanitize.text(e.getMessage(), 300), Redactor.safe(kept,
          IngestAgent.MAX_REJECTED_LINE_CHARS), clock.instant())));
      IngestMetrics.REJECTED.labels("otlp", Rejection.UNPARSEABLE.code()).inc();
      if (!stored(out)) {
        unavailable(ex, enc);
        return;
      }
      answer(ex, 400, enc, OtlpHttp.status(enc, "not an ExportLogsServiceRequest: " + e.getMessage()), "bad-request");
      return;
    }
    long wait = rate.take(agent, decoded.size());
    if (wait > 0) {
      ex.getResponseHeaders().set("Retry-After", Long.toString(wait));
      answer(ex, 429, enc, OtlpHttp.status(enc, "more than " + (long) settings.recordsPerSecond()
          + " records a second from this client: send again in " + wait + " s"), "throttled");
      return;
    }
    List<Outgoing> out = new ArrayList<>();
    List<String> reasons = new ArrayList<>();
    long rejected = read(agent, decoded, out, reasons);
    if (!stored(out)) {
      // what the readers learnt of records that were not stored is forgotten: the exporter sends
      // them again, and they are read afresh (a call counted but not stored would count no more)
      readers.remove(agent);
      unavailable(ex, enc);
      return;
    }
    RECORDS.labels(agent, "read").inc(decoded.size() - rejected);
    if (rejected > 0) {
      RECORDS.labels(agent, "rejected").inc(rejected);
    }
    String message = rejected == 0 ? null : rejected + " of " + decoded.size() + " log records rejected: "
        + String.join("; ", reasons) + (rejected > reasons.size() ? "; …" : "");
    answer(ex, 200, enc, OtlpHttp.response(enc, rejected, message), rejected == 0 ? "accepted" : "partial");
  }

  /** Each record read by the client's readers, in the order the records happened; returns how many were rejected. */
  private long read(String agent, OtlpLogs.Decoded decoded, List<Outgoing> out, List<String> reasons) {
    TelemetryFormats formats = readers.computeIfAbsent(agent, k -> new TelemetryFormats());
    Instant now = clock.instant();
    String file = origin(agent);
    long rejected = 0;
    synchronized (formats) {
      for (OtlpLogs.Entry e : TelemetryFormats.inTimeOrder(decoded.entries())) {
        SourceLine where = TelemetryFormats.place(e, file, 0, agent, ingestHost, now);
        TelemetryFormats.Read read = formats.read(e.record(), where);
        Parsed outcome = read.outcome();
        String label = read.format() == null ? "otlp" : read.format().wireName();
        boolean isRejected = outcome instanceof Parsed.Rejected;
        TailedLine line = new TailedLine(file, 0, 0, isRejected ? e.text() : "", false, false, false, null,
            where.idName());
        sender.send(outcome, line, now, label, read.format() == null ? null : read.format().wireName(), out);
        if (isRejected) {
          rejected++;
          note(reasons, ((Parsed.Rejected) outcome).reason());
        }
      }
    }
    for (OtlpLogs.Bad b : decoded.bad()) {
      Parsed outcome = Parsed.rejected(Rejection.UNPARSEABLE, "a log record of the wrong shape: " + b.reason());
      sender.send(outcome, new TailedLine(file, 0, 0, b.text(), false, false, false, null, file), now, "otlp", null, out);
      rejected++;
      note(reasons, ((Parsed.Rejected) outcome).reason());
    }
    return rejected;
  }

  private static void note(List<String> reasons, String reason) {
    if (reasons.size() < MAX_MESSAGE_REASONS) {
      reasons.add(Sanitize.text(reason, 200));
    }
  }

  /** Whether Kafka took every record (within the answer's time). */
  private boolean stored(List<Outgoing> out) {
    if (out.isEmpty()) {
      return true;
    }
    CompletableFuture<Exception> done = new CompletableFuture<>();
    sink.send(out, done::complete);
    try {
      Exception e = done.get(ANSWER_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      if (e != null) {
        IngestMetrics.PUBLISH_FAILURES.inc();
        log.warn("OTLP: Kafka did not take a request's records ({}); answered 503, the exporter sends them again",
            e.getMessage());
      }
      return e == null;
    } catch (TimeoutException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    } catch (java.util.concurrent.ExecutionException e) {
      return false;
    }
  }

  private static void unavailable(HttpExchange ex, OtlpHttp.Encoding enc) throws IOException {
    ex.getResponseHeaders().set("Retry-After", "5");
    answer(ex, 503, enc, OtlpHttp.status(enc, "Kafka did not take the records: send them again"), "unavailable");
  }

  /** The agent of the request's bearer token, else of its client certificate; empty when neither is known. */
  private Optional<String> who(HttpExchange ex) {
    String auth = ex.getRequestHeaders().getFirst("Authorization");
    if (auth != null && auth.regionMatches(true, 0, "Bearer ", 0, 7)) {
      return settings.clients().agentOfToken(auth.substring(7).strip());
    }
    if (ex instanceof HttpsExchange https) {
      try {
        Certificate[] chain = https.getSSLSession().getPeerCertificates();
        if (chain.length > 0 && chain[0] instanceof X509Certificate cert) {
          return settings.clients().agentOfCertificate(cert);
        }
      } catch (SSLPeerUnverifiedException e) {
        return Optional.empty();
      }
    }
    return Optional.empty();
  }

  /** Where an agent's records came from, as their origin and rejected lines name it. */
  static String origin(String agent) {
    return agent + "/otlp";
  }

  /** What a body refused for its size holds past its bound, read and dropped: at most {@value #DRAINED_BYTES} bytes. */
  static final long DRAINED_BYTES = 64L * 1024 * 1024;

  private static void drain(java.io.InputStream in, long atMost) {
    byte[] buf = new byte[64 * 1024];
    long read = 0;
    try {
      int n;
      while (read < atMost && (n = in.read(buf)) > 0) {
        read += n;
      }
    } catch (IOException e) {
      // the client went away
    }
  }

  private static long parseLong(String s) {
    try {
      return Long.parseLong(s.strip());
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  private static void answer(HttpExchange ex, int status, OtlpHttp.Encoding enc, byte[] body, String outcome)
      throws IOException {
    REQUESTS.labels(outcome).inc();
    ex.getResponseHeaders().set("Content-Type", enc.contentType);
    ex.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
    try (OutputStream o = ex.getResponseBody()) {
      o.write(body);
    }
  }

  /** The formats an exporter's records go to, for the banner. */
  public static String readers() {
    return String.join(", ", TelemetryFormats.all().stream().map(SourceFormat::wireName).toList());
  }

  /** Stops listening, then closes its sink (the endpoint's own producer). */
  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
    sink.close();
  }
}
