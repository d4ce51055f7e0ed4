package dev.knockwatch.events;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/** Short SHA-256 digests in hex: event ids, alert fingerprints, file identities. */
public final class Hashes {

  private static final HexFormat HEX = HexFormat.of();
  /** Looking a digest up costs more than hashing a short key: keep one per thread. */
  private static final ThreadLocal<MessageDigest> SHA256 = ThreadLocal.withInitial(() -> {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  });

  private Hashes() {}

  /** The first {@code bytes} bytes of SHA-256({@code data}), as {@code 2 * bytes} hex digits. */
  public static String sha256Hex(byte[] data, int bytes) {
    return HEX.formatHex(SHA256.get().digest(data), 0, bytes);
  }

  public static String sha256Hex(String text, int bytes) {
    return sha256Hex(text.getBytes(StandardCharsets.UTF_8), bytes);
  }
}
