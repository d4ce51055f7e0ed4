package dev.knockwatch.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Ports for a test to hand a process it launches ({@code --api-port N}). A port the kernel hands
 * out for port 0 is free when found, but it is in the ephemeral range, where any process's port-0
 * bind or outgoing connection can take it before the launched process binds it (a CI run: a
 * sibling test fork's metrics endpoint took a journey's API port, and `up` moved its API to
 * another). These come from below that range, where nothing takes a port unasked, each test JVM
 * from its own block, and are checked free on every address before they are handed out. A JVM
 * hands out no port twice until its block wraps. The build names each JVM's block: its tier
 * ({@code knockwatch.test.portTier}: the modules', cli's, the cli test run beside cli's own) and
 * its fork ({@code knockwatch.test.fork}: "fork 1", "fork 2"), two forks a tier.
 */
public final class TestPorts {
  /** Ports in one test JVM's block. */
  static final int BLOCK = 2_000;
  /** Blocks below the ephemeral range: three tiers of two forks. */
  static final int BLOCKS = 6;

  private static final int FIRST = firstPort(ephemeralStart(), block(Integer.getInteger("knockwatch.test.portTier", 0),
      fork(System.getProperty("knockwatch.test.fork"))));
  private static final AtomicInteger NEXT = new AtomicInteger();

  private TestPorts() {
  }

  /** A free port of this JVM's block, not handed out before by it. */
  public static int free() {
    for (int tried = 0; tried < BLOCK; tried++) {
      int port = FIRST + Math.floorMod(NEXT.getAndIncrement(), BLOCK);
      try (ServerSocket s = new ServerSocket(port)) { // the wildcard: free on 127.0.0.1 and every other address
        return s.getLocalPort();
      } catch (IOException taken) {
        // the next one
      }
    }
    throw new UncheckedIOException(new IOException("no free port in " + FIRST + "-" + (FIRST + BLOCK - 1)));
  }

  /** The fork's number in {@code "fork N"} (1 when absent or not so). */
  static int fork(String property) {
    try {
      return property == null ? 1 : Integer.parseInt(property.substring(property.lastIndexOf(' ') + 1));
    } catch (NumberFormatException e) {
      return 1;
    }
  }

  /** The block of a tier's fork (forks count from 1). */
  static int block(int tier, int fork) {
    return tier * 2 + (fork - 1) % 2;
  }

  /** The first port of block {@code block} (taken modulo {@link #BLOCKS}) under {@code ephemeralStart}. */
  static int firstPort(int ephemeralStart, int block) {
    return ephemeralStart - BLOCKS * BLOCK + Math.floorMod(block, BLOCKS) * BLOCK;
  }

  /** The first port of the kernel's ephemeral range (Linux's default 32768 when it cannot be read). */
  static int ephemeralStart() {
    try {
      String range = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).strip();
      int start = Integer.parseInt(range.split("\\s+")[0]);
      return start >= BLOCKS * BLOCK + 1024 ? start : 32768;
    } catch (IOException | RuntimeException e) {
      return 32768;
    }
  }
}
