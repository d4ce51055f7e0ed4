package dev.knockwatch.streams.api;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;

/** The TLS of the API: the server's key and certificate, and what it trusts of its peers. */
public record Tls(SSLContext server, SSLContext client) {

  /**
   * From PKCS12 stores under one password: the server's key from {@code keystore}; peers
   * verified against {@code truststore}, or the JDK's trusted certificates when it is null.
   */
  public static Tls fromPkcs12(Path keystore, Path truststore, char[] password)
      throws IOException, GeneralSecurityException {
    SSLContext server = SSLContext.getInstance("TLS");
    server.init(keys(keystore, password), null, null);
    SSLContext client = SSLContext.getDefault();
    if (truststore != null) {
      client = SSLContext.getInstance("TLS");
      client.init(null, trust(truststore, password), null);
    }
    return new Tls(server, client);
  }

  /**
   * A server's context whose clients may show a certificate, verified against {@code truststore}
   * (the JDK's trusted certificates when null): the OTLP endpoint's, which maps a client's
   * certificate to its agent.
   */
  public static SSLContext serverWithClients(Path keystore, Path truststore, char[] password)
      throws IOException, GeneralSecurityException {
    SSLContext server = SSLContext.getInstance("TLS");
    server.init(keys(keystore, password), truststore == null ? null : trust(truststore, password), null);
    return server;
  }

  private static KeyManager[] keys(Path keystore, char[] password) throws IOException, GeneralSecurityException {
    KeyManagerFactory keys = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    keys.init(load(keystore, password), password);
    return keys.getKeyManagers();
  }

  private static TrustManager[] trust(Path truststore, char[] password) throws IOException, GeneralSecurityException {
    TrustManagerFactory trust = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    trust.init(load(truststore, password));
    return trust.getTrustManagers();
  }

  private static KeyStore load(Path file, char[] password) throws IOException, GeneralSecurityException {
    KeyStore ks = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(file)) {
      ks.load(in, password);
    }
    return ks;
  }
}
