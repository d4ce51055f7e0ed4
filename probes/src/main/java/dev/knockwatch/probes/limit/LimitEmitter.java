package dev.knockwatch.probes.limit;

import dev.knockwatch.events.CommandId;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Clock;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * The built-in limit engine: writes srt violation records exactly as the srt bridge does
 * ({@code <logs>/<agentId>/<commandId>.violations.jsonl}, srt's fields plus commandId and
 * agentId), straight to the log dir and fast enough for load tests: each command's record is
 * prepared once, and only the timestamp changes from line to line.
 */
public final class LimitEmitter {

  /** What was written. */
  public record Result(long attempts, List<String> commandIds, double seconds) {
    public double perSecond() {
      return seconds <= 0 ? 0 : attempts / seconds;
    }
  }

  /** JavaScript's Date.toISOString(), as srt writes it: always milliseconds. */
  static final DateTimeFormatter JS_ISO = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSS'Z'")
      .withZone(ZoneOffset.UTC);

  private final Path logs;
  private final Clock clock;

  public LimitEmitter(Path logs, Clock clock) {
    this.logs = logs;
    this.clock = clock;
  }

  /** Runs the plan to its end (duration or max attempts). */
  public Result run(LimitPlan plan) {
    List<Command> commands = new ArrayList<>();
    try {
      for (int i = 0; i < plan.commands(); i++) {
        commands.add(new Command(logs, CommandId.random(), plan.agents().get(i % plan.agents().size()),
            plan.hosts().get(i % plan.hosts().size())));
      }
      long start = System.nanoTime();
      long end = start + plan.duration().toNanos();
      long written = 0;
      long max = plan.maxAttempts() > 0 ? plan.maxAttempts() : Long.MAX_VALUE;
      int next = 0;
      while (written < max) {
        long now = System.nanoTime();
        if (now >= end && !(plan.duration().isZero() && plan.maxAttempts() > 0)) {
          break;
        }
        long owed = owed(plan, now - start, written, commands.size());
        if (owed <= 0) {
          flush(commands);
          Thread.sleep(plan.pattern() == LimitPlan.Pattern.BURST ? 5 : 1);
          continue;
        }
        String ts = JS_ISO.format(clock.instant());
        for (long k = 0; k < owed && written < max; k++, written++) {
          commands.get(next).write(ts);
          next = next + 1 == commands.size() ? 0 : next + 1;
        }
      }
      double seconds = (System.nanoTime() - start) / 1e9;
      return new Result(written, commands.stream().map(c -> c.id).toList(), seconds);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write limit probe records under " + logs, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Result(0, commands.stream().map(c -> c.id).toList(), 0);
    } finally {
      for (Command c : commands) {
        c.close();
      }
    }
  }

  /** Attempts due by {@code elapsedNanos}, minus those written. */
  static long owed(LimitPlan plan, long elapsedNanos, long written, int commands) {
    double seconds = elapsedNanos / 1e9;
    double due = switch (plan.pattern()) {
      case STEADY -> plan.rate() == 0 ? Double.MAX_VALUE : Math.floor(seconds * plan.rate()) + 1;
      // the whole second's attempts at its start
      case BURST -> plan.rate() == 0 ? Double.MAX_VALUE : (Math.floor(seconds) + 1) * plan.rate();
      // every command once per interval, all commands together
      case SLOW -> (Math.floor(seconds / plan.slowInterval()) + 1) * commands;
    };
    return due >= Long.MAX_VALUE / 2 ? 4096 : (long) Math.min(due - written, 1 << 20);
  }

  private static void flush(List<Command> commands) throws IOException {
    for (Command c : commands) {
      c.out.flush();
    }
  }

  /** One command's file and its record, split around the timestamp. */
  private static final class Command {
    final String id;
    final OutputStream out;
    final byte[] head;
    final byte[] tail;

    Command(Path logs, String id, String agent, String target) throws IOException {
      this.id = id;
      Path file = logs.resolve(agent).resolve(id + ".violations.jsonl");
      Files.createDirectories(file.getParent());
      this.out = new BufferedOutputStream(Files.newOutputStream(file, StandardOpenOption.CREATE,
          StandardOpenOption.APPEND), 1 << 16);
      String command = "curl -s " + LimitPlan.url(target);
      this.head = ("{\"line\":\"deny network-outbound " + target + " (host is not on the allow list)\","
          + "\"encodedCommand\":\"" + Base64.getEncoder().encodeToString(id.getBytes(StandardCharsets.UTF_8)) + "\","
          + "\"command\":\"" + command + "\",\"timestamp\":\"").getBytes(StandardCharsets.UTF_8);
      this.tail = ("\",\"commandId\":\"" + id + "\",\"agentId\":\"" + agent + "\"}\n").getBytes(StandardCharsets.UTF_8);
    }

    void write(String timestamp) throws IOException {
      out.write(head);
      out.write(timestamp.getBytes(StandardCharsets.ISO_8859_1));
      out.write(tail);
    }

    void close() {
      try {
        out.close();
      } catch (IOException e) {
        // the run's own error, if any, is the one reported
      }
    }
  }
}
