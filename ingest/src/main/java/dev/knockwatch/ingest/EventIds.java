package dev.knockwatch.ingest;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Stable event ids: a hash of where the line stands (file relative to the watched root, byte
 * offset, and the event's index within the line), so a line read twice after a restart yields
 * the same id and downstream can tell the duplicate.
 */
public final class EventIds {

  private static final HexFormat HEX = HexFormat.of();
  /** Looking a digest up costs more than hashing a short key: keep one per thread. */
  private static final ThreadLocal<MessageDigest> SHA256 = ThreadLocal.withInitial(() -> {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  });

  private EventIds() {}

  public static String of(String file, long offset, int index) {
    byte[] digest = SHA256.get().digest((file + "\u0000" + offset + "\u0000" + index).getBytes(StandardCharsets.UTF_8));
    return HEX.formatHex(digest, 0, 16);
  }
}
