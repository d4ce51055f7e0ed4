package dev.knockwatch.probes.limit;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.knockwatch.events.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.Base64;

/**
 * A limit probe: a controlled retry storm, as an agent that does not accept "no" would make it.
 * It writes {@code attempts} srt violation records for one fresh command, in the layout the
 * ingest agent reads ({@code <logs>/<agentId>/<commandId>.violations.jsonl}) and in srt's own
 * record shape, so the refusals travel the whole real pipeline.
 *
 * <p>This is the built-in emitter the design names for machines without srt; the probes that
 * run the real srt come with the probes issue.
 */
public final class RetryStormProbe {

  public static final String AGENT_ID = "knockwatch-probe";
  private static final SecureRandom RANDOM = new SecureRandom();

  private final Path logs;
  private final String host;
  private final int port;
  private final int attempts;
  private final Duration interval;
  private final Clock clock;

  public RetryStormProbe(Path logs, String host, int port, int attempts, Duration interval, Clock clock) {
    this.logs = logs;
    this.host = host;
    this.port = port;
    this.attempts = attempts;
    this.interval = interval;
    this.clock = clock;
  }

  /** A new 22-character base64url command id, as srt makes them. */
  public static String newCommandId() {
    byte[] b = new byte[16];
    RANDOM.nextBytes(b);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(b);
  }

  /** Writes the storm and returns the command id it used. */
  public String run() {
    String commandId = newCommandId();
    Path file = logs.resolve(AGENT_ID).resolve(commandId + ".violations.jsonl");
    try {
      Files.createDirectories(file.getParent());
      for (int i = 0; i < attempts; i++) {
        if (i > 0 && !interval.isZero()) {
          Thread.sleep(interval.toMillis());
        }
        Files.writeString(file, record(commandId) + "\n", StandardCharsets.UTF_8,
            StandardOpenOption.CREATE, StandardOpenOption.APPEND);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write probe records to " + file, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return commandId;
  }

  String record(String commandId) {
    ObjectNode r = Json.MAPPER.createObjectNode();
    r.put("line", "deny network-outbound " + host + ":" + port + " (host is not on the allow list)");
    r.put("encodedCommand", Base64.getEncoder().encodeToString(commandId.getBytes(StandardCharsets.UTF_8)));
    r.put("command", "curl -s https://" + host + "/ # knockwatch retry-storm probe");
    r.put("timestamp", clock.instant().toString());
    r.put("commandId", commandId);
    r.put("agentId", AGENT_ID);
    return r.toString();
  }
}
