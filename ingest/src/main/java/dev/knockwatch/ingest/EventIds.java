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

  private EventIds() {}

  public static String of(String file, long offset, int index) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      byte[] digest = sha.digest((file + "\u0000" + offset + "\u0000" + index).getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(digest, 0, 16);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every JDK", e);
    }
  }
}
