package dev.knockwatch.ingest.otlp;

import dev.knockwatch.events.AgentId;
import dev.knockwatch.events.Hashes;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.cert.CertificateEncodingException;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Who may export to the OTLP endpoint, and which agent each is: a host proves itself with a bearer
 * token or a client certificate, and the agent is the one its entry names (docs/TRUST.md: never an
 * attribute the exporter chose). Tokens come from the sources config (as their SHA-256, so the
 * config holds no secret) and from a directory of {@code <agentId>.token} files (what
 * {@code codex settings} and {@code claude-code settings --otel} write under {@code var/}), read
 * again when a token is not known and the directory was last read more than a second ago.
 * Certificates are pinned by their SHA-256 or named by their subject (with the endpoint's
 * truststore).
 */
public final class OtlpClients {

  /** One exporting host: the agent it is, and one of how it proves it. */
  public record Client(String agent, String tokenSha256, String certificateSha256, String subject) {}

  public static final String TOKEN_SUFFIX = ".token";
  public static final int MIN_TOKEN_CHARS = 16;
  private static final Duration RESCAN = Duration.ofSeconds(1);

  private final List<Client> configured;
  private final Path tokensDir;
  private final Clock clock;
  private volatile Map<String, String> byToken;
  private volatile Instant scanned = Instant.EPOCH;

  public OtlpClients(List<Client> configured, Path tokensDir, Clock clock) {
    for (Client c : configured) {
      AgentId.problem(c.agent()).ifPresent(p -> {
        throw new IllegalArgumentException("an OTLP client's agent: " + p);
      });
    }
    this.configured = List.copyOf(configured);
    this.tokensDir = tokensDir;
    this.clock = clock;
    this.byToken = scan();
  }

  /** The agent whose token this is. */
  public Optional<String> agentOfToken(String token) {
    if (token == null || token.length() < MIN_TOKEN_CHARS) {
      return Optional.empty();
    }
    String digest = sha256(token);
    String agent = byToken.get(digest);
    if (agent == null && tokensDir != null && clock.instant().isAfter(scanned.plus(RESCAN))) {
      byToken = scan();
      agent = byToken.get(digest);
    }
    return Optional.ofNullable(agent);
  }

  /** The agent whose certificate this is: pinned by its SHA-256, else named by its subject. */
  public Optional<String> agentOfCertificate(X509Certificate cert) {
    String fingerprint;
    try {
      fingerprint = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(cert.getEncoded()));
    } catch (CertificateEncodingException | NoSuchAlgorithmException e) {
      return Optional.empty();
    }
    String subject = cert.getSubjectX500Principal().getName();
    for (Client c : configured) {
      if (c.certificateSha256() != null && c.certificateSha256().equalsIgnoreCase(fingerprint)) {
        return Optional.of(c.agent());
      }
    }
    for (Client c : configured) {
      if (c.subject() != null && c.subject().equals(subject)) {
        return Optional.of(c.agent());
      }
    }
    return Optional.empty();
  }

  /** Whether any client could be known (else the endpoint would refuse everyone). */
  public boolean any() {
    return !configured.isEmpty() || tokensDir != null;
  }

  public static String sha256(String token) {
    return Hashes.sha256Hex(token.getBytes(StandardCharsets.UTF_8), 32);
  }

  private Map<String, String> scan() {
    Map<String, String> out = new HashMap<>();
    for (Client c : configured) {
      if (c.tokenSha256() != null) {
        out.put(c.tokenSha256().toLowerCase(java.util.Locale.ROOT), c.agent());
      }
    }
    scanned = clock.instant();
    if (tokensDir == null || !Files.isDirectory(tokensDir)) {
      return out;
    }
    try (DirectoryStream<Path> files = Files.newDirectoryStream(tokensDir, "*" + TOKEN_SUFFIX)) {
      for (Path f : files) {
        String name = f.getFileName().toString();
        String agent = name.substring(0, name.length() - TOKEN_SUFFIX.length());
        if (AgentId.problem(agent).isPresent() || !Files.isRegularFile(f)) {
          continue;
        }
        String token = Files.readString(f, StandardCharsets.UTF_8).strip();
        if (token.length() >= MIN_TOKEN_CHARS) {
          out.putIfAbsent(sha256(token), agent);
        }
      }
    } catch (IOException e) {
      // a directory that cannot be read now is read again on the next unknown token
    }
    return out;
  }
}
