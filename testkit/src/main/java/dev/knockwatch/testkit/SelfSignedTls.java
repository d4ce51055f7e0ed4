package dev.knockwatch.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A self-signed certificate for 127.0.0.1 and localhost, made by the JDK's own {@code keytool}: a
 * PKCS12 keystore holding its key (for a server) and a PKCS12 truststore holding only the
 * certificate (for its clients), both under one password.
 */
public record SelfSignedTls(Path keystore, Path truststore, String password) {

  /** Makes both stores in {@code dir} (created if missing). */
  public static SelfSignedTls generate(Path dir, String password) {
    try {
      Files.createDirectories(dir);
      Path keystore = dir.resolve("server.keystore.p12");
      Path cert = dir.resolve("server.crt");
      Path truststore = dir.resolve("truststore.p12");
      keytool("-genkeypair", "-alias", "server", "-keyalg", "RSA", "-keysize", "2048", "-validity", "2",
          "-dname", "CN=localhost", "-ext", "SAN=ip:127.0.0.1,dns:localhost",
          "-storetype", "PKCS12", "-keystore", keystore.toString(), "-storepass", password);
      keytool("-exportcert", "-alias", "server", "-keystore", keystore.toString(), "-storepass", password,
          "-rfc", "-file", cert.toString());
      keytool("-importcert", "-noprompt", "-alias", "server", "-file", cert.toString(),
          "-storetype", "PKCS12", "-keystore", truststore.toString(), "-storepass", password);
      return new SelfSignedTls(keystore, truststore, password);
    } catch (IOException e) {
      throw new IllegalStateException("cannot make a self-signed certificate in " + dir, e);
    }
  }

  private static void keytool(String... args) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    try {
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
        throw new IllegalStateException("keytool " + args[0] + " failed: " + out.trim());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      p.destroyForcibly();
      throw new IllegalStateException("interrupted while running keytool", e);
    }
  }
}
