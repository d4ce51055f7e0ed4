package dev.knockwatch.cli;

import dev.knockwatch.cli.run.UsageException;
import dev.knockwatch.streams.api.QueryApi;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import picocli.CommandLine.Option;

/**
 * {@code --api-tls-keystore} and {@code --api-tls-truststore}: the query API over HTTPS, and the
 * instances' forwarding to each other over HTTPS, verifying the peer's certificate and host name.
 * Both stores are PKCS12 under the password of {@code KNOCKWATCH_API_TLS_PASSWORD} (an environment
 * variable, never an option: a command line is visible to every user of the host).
 */
final class ApiTlsOptions {

  @Option(names = "--api-tls-keystore", paramLabel = "FILE", defaultValue = "${env:KNOCKWATCH_API_TLS_KEYSTORE}",
      description = "Serve the query API over HTTPS with this PKCS12 keystore's key and certificate "
          + "(password in env KNOCKWATCH_API_TLS_PASSWORD; env KNOCKWATCH_API_TLS_KEYSTORE).")
  Path keystore;

  @Option(names = "--api-tls-truststore", paramLabel = "FILE", defaultValue = "${env:KNOCKWATCH_API_TLS_TRUSTSTORE}",
      description = "The certificates other instances' APIs are verified against when forwarding (PKCS12, same "
          + "password; default: the JDK's; env KNOCKWATCH_API_TLS_TRUSTSTORE).")
  Path truststore;

  /** The API's TLS, or null without a keystore; an unusable store is a usage error naming it, never its password. */
  dev.knockwatch.streams.api.Tls tls() {
    if (keystore == null) {
      if (truststore != null) {
        throw new UsageException("--api-tls-truststore needs --api-tls-keystore");
      }
      return null;
    }
    String pw = System.getenv("KNOCKWATCH_API_TLS_PASSWORD");
    if (pw == null) {
      throw new UsageException("--api-tls-keystore " + keystore + ": set its password in KNOCKWATCH_API_TLS_PASSWORD");
    }
    for (Path f : new Path[] {keystore, truststore}) {
      if (f != null && !Files.isRegularFile(f)) {
        throw new UsageException((f == keystore ? "--api-tls-keystore " : "--api-tls-truststore ") + f + ": no such file");
      }
    }
    try {
      return dev.knockwatch.streams.api.Tls.fromPkcs12(keystore, truststore, pw.toCharArray());
    } catch (IOException | GeneralSecurityException e) {
      // a wrong password reads as an IOException; no message of these names a secret, but say it plainly
      throw new UsageException("--api-tls-keystore " + keystore + (truststore == null ? "" : ", --api-tls-truststore "
          + truststore) + ": not readable as PKCS12 with the password of KNOCKWATCH_API_TLS_PASSWORD ("
          + e.getClass().getSimpleName() + ")");
    }
  }
}
