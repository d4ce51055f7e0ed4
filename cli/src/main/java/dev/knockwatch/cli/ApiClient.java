package dev.knockwatch.cli;

import dev.knockwatch.cli.run.UsageException;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;

/**
 * A GET of the query API of {@code up} or {@code streams}, with its token: what {@code query} and
 * {@code allowlist} ask. Without {@code --api} and a token, they use what the {@code up} of this
 * directory wrote under its {@code var} ({@code KNOCKWATCH_VAR}, default {@code var}): the API's
 * URL in {@value #URL_FILE}, and a token it generated in {@value #TOKEN_FILE} (owner-only; a token
 * the operator gave is never written).
 */
final class ApiClient {

  static final String URL_FILE = "api-url";
  static final String TOKEN_FILE = "api-token";
  static final String DEFAULT_API = "http://127.0.0.1:8080";

  private ApiClient() {}

  private static Path var() {
    String v = System.getenv("KNOCKWATCH_VAR");
    return Path.of(v == null || v.isBlank() ? "var" : v);
  }

  /** What {@code up} leaves for the commands run beside it: its API's URL, and its token when it generated one. */
  static void remember(Path var, String url, String generatedToken) throws IOException {
    Files.createDirectories(var);
    Files.writeString(var.resolve(URL_FILE), url + "\n", StandardCharsets.UTF_8);
    Path token = var.resolve(TOKEN_FILE);
    Files.deleteIfExists(token);
    if (generatedToken != null) {
      Files.createFile(token, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
      Files.writeString(token, generatedToken + "\n", StandardCharsets.UTF_8);
    }
  }

  /** The API to ask: {@code given}, else what up wrote, else {@value #DEFAULT_API}. */
  static String api(String given) throws IOException {
    if (given != null) {
      return given;
    }
    Path written = var().resolve(URL_FILE);
    return Files.isRegularFile(written) ? Files.readString(written, StandardCharsets.UTF_8).strip() : DEFAULT_API;
  }

  /** The token from {@code tokenFile}, else {@code KNOCKWATCH_API_TOKEN}, else the one up generated; a usage error when none. */
  static String token(Path tokenFile) throws IOException {
    Path generated = var().resolve(TOKEN_FILE);
    String token = tokenFile != null ? dev.knockwatch.cli.run.FileOption.read("--token-file", tokenFile)
        : System.getenv("KNOCKWATCH_API_TOKEN") != null ? System.getenv("KNOCKWATCH_API_TOKEN")
        : Files.isReadable(generated) ? Files.readString(generated, StandardCharsets.UTF_8).strip() : null;
    if (token == null || token.isBlank()) {
      throw new UsageException("no token: give --token-file or set KNOCKWATCH_API_TOKEN (up prints a generated one)");
    }
    return token;
  }

  /** {@code GET api + path}; 401 and 503 are usage errors with their reason, other statuses the caller's. */
  static HttpResponse<String> get(String given, Path tokenFile, String path) throws IOException, InterruptedException {
    String api = api(given);
    HttpRequest req = HttpRequest.newBuilder(URI.create(api.replaceAll("/+$", "") + path))
        .timeout(Duration.ofSeconds(15)).header("Authorization", "Bearer " + token(tokenFile)).GET().build();
    HttpResponse<String> r;
    try {
      r = HttpClient.newHttpClient().send(req, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new UsageException("no query API at " + api + " (is ./knockwatch up running?)");
    }
    switch (r.statusCode()) {
      case 401 -> throw new UsageException("the query API refused the token");
      case 503 -> throw new UsageException("the timeline is rebalancing; try again in a moment");
      default -> {
        return r;
      }
    }
  }
}
