package dev.knockwatch.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** Writes srt violation records the way the srt bridge does, for tests that need many distinct lines. */
public final class SrtRecords {

  private SrtRecords() {}

  /** Appends records {@code from} (inclusive) to {@code to} (exclusive) for one command, each to another host. */
  public static void append(Path file, String commandId, int from, int to) throws IOException {
    StringBuilder b = new StringBuilder();
    for (int i = from; i < to; i++) {
      b.append("{\"line\":\"deny network-outbound host-").append(i).append(".test:443 (host is not on the allow list)\",")
          .append("\"commandId\":\"").append(commandId).append("\",\"timestamp\":\"2026-11-29T18:45:32.887Z\"}\n");
    }
    Files.createDirectories(file.toAbsolutePath().getParent());
    Files.writeString(file, b, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
  }
}
