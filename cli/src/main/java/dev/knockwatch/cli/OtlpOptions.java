package dev.knockwatch.cli;

import dev.knockwatch.cli.run.Pipeline;
import dev.knockwatch.cli.run.UsageException;
import dev.knockwatch.ingest.EventSink;
import dev.knockwatch.ingest.KafkaEventSink;
import dev.knockwatch.ingest.OtlpIngest;
import dev.knockwatch.ingest.config.OtlpConfig;
import dev.knockwatch.ingest.otlp.OtlpClients;
import dev.knockwatch.streams.api.QueryApi;
import java.io.IOException;
import java.net.BindException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.time.Clock;
import java.util.Map;
import java.util.Optional;
import picocli.CommandLine.Option;

/**
 * The OTLP endpoint's options, the same on {@code up} (on by default, on 127.0.0.1:4318) and
 * {@code ingest} (on when given a port or a sources file with {@code otlp:}): where it listens,
 * its TLS, and who may send (the tokens under {@code var/otlp/tokens}, which {@code codex settings}
 * and {@code claude-code settings --otel} write, and the sources file's {@code otlp: clients}).
 */
final class OtlpOptions {

  @Option(names = "--otlp-port", paramLabel = "N", defaultValue = "${env:KNOCKWATCH_OTLP_PORT}",
      description = "Serve OTLP/HTTP logs (POST /v1/logs) on port N (`up`: 4318 unless given; env KNOCKWATCH_OTLP_PORT).")
  Integer port;

  @Option(names = "--otlp-bind", paramLabel = "ADDRESS", defaultValue = "${env:KNOCKWATCH_OTLP_BIND}",
      description = "Address the OTLP endpoint listens on (default: the sources file's otlp: listen, else 127.0.0.1).")
  String bind;

  @Option(names = "--no-otlp", description = "`up`: serve no OTLP endpoint.")
  boolean off;

  @Option(names = "--otlp-tls-keystore", paramLabel = "FILE", defaultValue = "${env:KNOCKWATCH_OTLP_TLS_KEYSTORE}",
      description = "Serve OTLP over HTTPS with this PKCS12 keystore (password in env KNOCKWATCH_OTLP_TLS_PASSWORD),"
          + " asking for client certificates.")
  Path keystore;

  @Option(names = "--otlp-tls-truststore", paramLabel = "FILE", defaultValue = "${env:KNOCKWATCH_OTLP_TLS_TRUSTSTORE}",
      description = "The certificates clients' certificates are verified against (PKCS12, same password); the sources"
          + " file's otlp: clients name them by subject or SHA-256.")
  Path truststore;

  /** Where a token of an agent lives: {@code <var>/otlp/tokens/<agentId>.token}. */
  static Path tokensDir(Path var) {
    return var.resolve("otlp").resolve("tokens");
  }

  /** The agent's token: the one under {@code tokens} when there is one, else a new one written there. */
  static String token(Path tokens, String agent) throws IOException {
    dev.knockwatch.events.AgentId.problem(agent).ifPresent(p -> {
      throw new UsageException("the agent " + p);
    });
    Files.createDirectories(tokens);
    Path file = tokens.resolve(agent + ".token");
    if (Files.isRegularFile(file)) {
      String t = Files.readString(file, StandardCharsets.UTF_8).strip();
      if (t.length() >= 16) {
        return t;
      }
    }
    byte[] b = new byte[32];
    new java.security.SecureRandom().nextBytes(b);
    String t = java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(b);
    Files.deleteIfExists(file);
    Files.createFile(file, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
    Files.writeString(file, t + "\n", StandardCharsets.UTF_8);
    return t;
  }

  /** Where {@code up} writes its endpoint's URL, for {@code codex settings} to print. */
  static Path endpointFile(Path var) {
    return var.resolve("otlp").resolve("endpoint");
  }

  /**
   * The endpoint, started, or null when off ({@code onByDefault}: {@code up}'s); its records go to
   * Kafka through a producer of its own.
   */
  OtlpIngest start(boolean onByDefault, Path var, Optional<OtlpConfig> fromSources, String bootstrap,
      Map<String, Object> clientProps) throws IOException {
    if (off || (!onByDefault && port == null && fromSources.isEmpty())) {
      return null;
    }
    OtlpConfig c = fromSources.orElse(OtlpConfig.defaults());
    int p = port != null ? port : c.port();
    if (p < 1 || p > 65535) {
      throw new UsageException("--otlp-port " + p + " is not a port (1-65535)");
    }
    String address = bind != null && !bind.isBlank() ? bind : c.bind();
    Files.createDirectories(tokensDir(var));
    OtlpClients clients = new OtlpClients(c.clients(), tokensDir(var), Clock.systemUTC());
    OtlpIngest.Settings settings = new OtlpIngest.Settings(address, p, tls(), clients, c.maxBodyBytes(),
        c.recordsPerSecond(), c.burst());
    EventSink sink = KafkaEventSink.forRequests(bootstrap, clientProps, 5);
    OtlpIngest otlp;
    try {
      otlp = new OtlpIngest(settings, sink, Pipeline.hostName(), Clock.systemUTC());
    } catch (BindException e) {
      if (port != null || fromSources.isPresent()) {
        sink.close();
        throw new UsageException("the OTLP endpoint cannot listen on " + address + ":" + p + " (" + e.getMessage()
            + "): give --otlp-port another port, or --no-otlp");
      }
      // the default port is taken: a free one, which the banner and var/otlp/endpoint name
      otlp = new OtlpIngest(new OtlpIngest.Settings(address, 0, settings.tls(), clients, settings.maxBodyBytes(),
          settings.recordsPerSecond(), settings.burst()), sink, Pipeline.hostName(), Clock.systemUTC());
    }
    Files.writeString(endpointFile(var), otlp.url().replace("0.0.0.0", "127.0.0.1") + "\n", StandardCharsets.UTF_8);
    return otlp;
  }

  private javax.net.ssl.SSLContext tls() {
    if (keystore == null) {
      if (truststore != null) {
        throw new UsageException("--otlp-tls-truststore needs --otlp-tls-keystore");
      }
      return null;
    }
    String pw = System.getenv("KNOCKWATCH_OTLP_TLS_PASSWORD");
    if (pw == null) {
      throw new UsageException("--otlp-tls-keystore " + keystore + ": set its password in KNOCKWATCH_OTLP_TLS_PASSWORD");
    }
    try {
      return dev.knockwatch.streams.api.Tls.serverWithClients(keystore, truststore, pw.toCharArray());
    } catch (IOException | GeneralSecurityException e) {
      throw new UsageException("--otlp-tls-keystore " + keystore + (truststore == null ? "" : ", --otlp-tls-truststore "
          + truststore) + ": not readable as PKCS12 with the password of KNOCKWATCH_OTLP_TLS_PASSWORD ("
          + e.getClass().getSimpleName() + ")");
    }
  }
}
