package dev.knockwatch.cli;

import dev.knockwatch.cli.run.Pipeline;
import dev.knockwatch.cli.run.UsageException;
import dev.knockwatch.streams.api.QueryApi;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** The query API's and the timeline's options, the same on {@code up} and {@code streams}. */
final class ApiOptions {

  @Option(names = "--api-port", paramLabel = "N", defaultValue = "${env:KNOCKWATCH_API_PORT:-8080}",
      description = "Port of the query API (default: ${DEFAULT-VALUE}; env KNOCKWATCH_API_PORT); `up` takes a free "
          + "one when it is taken.")
  int port;

  @Option(names = "--api-bind", paramLabel = "ADDRESS", defaultValue = "${env:KNOCKWATCH_API_BIND:-127.0.0.1}",
      description = "Address the query API listens on (default: ${DEFAULT-VALUE}; env KNOCKWATCH_API_BIND).")
  String bind;

  @Option(names = "--api-allowed-hosts", paramLabel = "HOST", split = ",",
      defaultValue = "${env:KNOCKWATCH_API_ALLOWED_HOSTS:-}",
      description = "More Host names the query API and console answer to (name: any port, name:port, or * for any), "
          + "beside the bind address, 127.0.0.1/localhost/[::1] when it is loopback or 0.0.0.0, the machine's names and "
          + "addresses for 0.0.0.0, and --api-host, each with the port; any other Host is answered 421 "
          + "(DNS rebinding; env KNOCKWATCH_API_ALLOWED_HOSTS).")
  List<String> allowedHosts = new ArrayList<>();

  @Option(names = "--api-token-file", paramLabel = "FILE", defaultValue = "${env:KNOCKWATCH_API_TOKEN_FILE}",
      description = "A file holding the API's bearer token (env KNOCKWATCH_API_TOKEN_FILE); else KNOCKWATCH_API_TOKEN; "
          + "else one is generated and printed.")
  Path tokenFile;

  @Option(names = "--timeline-retention", paramLabel = "DURATION", converter = DurationConverter.class,
      defaultValue = "${env:KNOCKWATCH_TIMELINE_RETENTION:-30d}",
      description = "How long the timeline keeps an idle command: 12h, 30d or ISO-8601 (default: ${DEFAULT-VALUE}; "
          + "env KNOCKWATCH_TIMELINE_RETENTION).")
  Duration retention;

  @Mixin ApiTlsOptions tls;

  ApiToken token() {
    return ApiToken.resolve(tokenFile, System.getenv("KNOCKWATCH_API_TOKEN"));
  }

  /** The entries of --api-allowed-hosts, each checked: a usage error names one that is not a host. */
  List<String> allowedHosts() {
    List<String> out = new ArrayList<>();
    for (String entry : allowedHosts) {
      if (entry.isBlank()) {
        continue; // the empty default, or a trailing comma
      }
      try {
        out.add(QueryApi.allowedHost(entry));
      } catch (IllegalArgumentException e) {
        throw new UsageException("--api-allowed-hosts: " + e.getMessage());
      }
    }
    return out;
  }

  Duration retention() {
    return retention;
  }

  /** How other instances reach this one's API ({@code application.server}): {@code host} if given, else the bind address or, for 0.0.0.0, the host name. */
  String advertised(String host) {
    return host != null && !host.isBlank() ? host : "0.0.0.0".equals(bind) ? Pipeline.hostName() : bind;
  }
}
