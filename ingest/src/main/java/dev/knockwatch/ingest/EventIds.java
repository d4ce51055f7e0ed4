package dev.knockwatch.ingest;

import dev.knockwatch.events.Hashes;


/**
 * Stable event ids: a hash of where the line stands (file relative to the watched root, byte
 * offset, and the event's index within the line), so a line read twice after a restart yields
 * the same id and downstream can tell the duplicate.
 */
public final class EventIds {

  private EventIds() {}

  public static String of(String file, long offset, int index) {
    return Hashes.sha256Hex(file + "\u0000" + offset + "\u0000" + index, 16);
  }
}
