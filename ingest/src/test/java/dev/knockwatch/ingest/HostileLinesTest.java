package dev.knockwatch.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.CommandId;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.RejectedLine;
import dev.knockwatch.events.Topics;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.formats.json.JsonAccessLogParser;
import dev.knockwatch.testkit.EmbeddedKafkaExtension;
import dev.knockwatch.testkit.TopicReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Property: whatever an agent writes, in any format ingest reads, through the real parsers and the
 * real Kafka sink to a real broker, no exception escapes, every line becomes events, a rejected
 * record or a counted skip, nothing published carries an unsafe or unbounded field, and another
 * command's well-formed refusal in the same batches is published.
 */
@Tag("integration")
@ExtendWith(EmbeddedKafkaExtension.class)
class HostileLinesTest {

  static final int LINES_PER_FILE = 60;
  static final int FILES_PER_FORMAT = 3;

  @TempDir Path dir;

  @ParameterizedTest(name = "seed {0}")
  @ValueSource(longs = {1, 2, 3, 4})
  void noLineStopsIngestOrHidesAnotherCommandsRefusalAndNothingUnsafeIsPublished(long seed, EmbeddedKafkaBroker broker)
      throws Exception {
    Hostile h = new Hostile(seed);
    String prefix = "hostile-" + seed + "-" + System.nanoTime();
    Path logs = dir.resolve("logs");
    Tree tree = tree(h, logs, prefix);
    List<Path> srtFiles = tree.srtFiles();
    String control = tree.control();
    Path jsonLogs = dir.resolve("json");
    Path jsonFile = write(jsonLogs.resolve(prefix + "-json").resolve("envoy.log"), () -> envoyLine(h));

    try (KafkaEventSink sink = KafkaEventSink.create(broker.bootstrapServers(), Map.of());
        IngestAgent agent = LogLayout.forLogDirectory(logs, p -> true, null, sink, "host-a", Duration.ZERO);
        IngestAgent json = LogLayout.forFormat(jsonLogs, p -> true, Formats.named("json").orElseThrow(), () -> new JsonAccessLogParser(
            Map.of("host", "authority", "status", "response_code", "commandId", "x_command_id", "timestamp", "start_time",
                "url", "path"), Set.of(403, 407)), sink, "host-a")) {
      while (agent.pollOnce() > 0) {
        // every line, batch after batch: any escaping exception fails the test
      }
      while (json.pollOnce() > 0) {
        // the same for the JSON access log
      }
    }

    List<ViolationEvent> events = TopicReader.readToEnd(broker, Topics.VIOLATIONS.name(),
        Json.serde(ViolationEvent.class).deserializer(), r -> r.value().origin() != null
            && r.value().origin().file().startsWith(prefix)).stream().map(ConsumerRecord::value).toList();
    List<RejectedLine> rejected = TopicReader.readToEnd(broker, Topics.REJECTED.name(),
        Json.serde(RejectedLine.class).deserializer(), r -> r.value().file().startsWith(prefix)).stream()
        .map(ConsumerRecord::value).toList();

    assertThat(events).as("the other command's refusal").anySatisfy(e -> {
      assertThat(e.commandId()).isEqualTo(control);
      assertThat(e.host()).isEqualTo("pastebin.com");
    });
    for (ViolationEvent e : events) {
      for (String field : new String[] {e.commandId(), e.agentId(), e.action(), e.host(), e.method(), e.url(), e.path(),
          e.reason(), e.proxyError(), e.errno(), e.syscall(), e.commandText(), e.origin().file()}) {
        assertSafe(field, 4096 + 1, e);
      }
      assertThat(CommandId.problem(e.commandId())).as("%s", e).isEmpty();
      // no agent-written time moves stream time past the ingest clock plus the bound, or before 1970
      assertThat(e.observedAt()).as("%s", e).isNotNull().isAfterOrEqualTo(java.time.Instant.EPOCH)
          .isBeforeOrEqualTo(e.ingestedAt().plus(EventTime.DEFAULT_MAX_AHEAD));
      if (e.timeSource() != null) {
        assertThat(e.observedAt()).isEqualTo(e.ingestedAt());
      }
    }
    for (RejectedLine r : rejected) {
      assertSafe(r.line(), IngestAgent.MAX_REJECTED_LINE_CHARS + 1, r);
      assertSafe(r.reason(), 4096, r);
    }
    // an srt record is never skipped: each line is its event or its rejected record
    Set<String> accounted = new HashSet<>();
    events.forEach(e -> accounted.add(e.origin().file() + ":" + e.origin().offset()));
    rejected.forEach(r -> accounted.add(r.key()));
    for (Path f : srtFiles) {
      String rel = logs.relativize(f).toString();
      long offset = 0;
      for (byte[] line : lines(Files.readAllBytes(f))) {
        if (!new String(line, StandardCharsets.UTF_8).isBlank()) {
          assertThat(accounted).as("line at %s:%d", rel, offset).contains(rel + ":" + offset);
        }
        offset += line.length + 1;
      }
    }
    // the run met what it is for: refusals with hostile fields got through, made safe
    System.out.printf("seed %d: %d events (%s), %d rejected%n", seed, events.size(), events.stream()
        .collect(java.util.stream.Collectors.groupingBy(ViolationEvent::source, java.util.stream.Collectors.counting())),
        rejected.size());
    assertThat(events).as("events published").hasSizeGreaterThan(60);
    assertThat(rejected).as("lines rejected").hasSizeGreaterThan(50);
    assertThat(events).as("an event with a code point replaced").anySatisfy(e ->
        assertThat(e.host() + e.commandText() + e.reason() + e.path()).contains("\uFFFD"));
    assertThat(events.stream().map(ViolationEvent::source).distinct()).as("sources seen").hasSizeGreaterThanOrEqualTo(6);
    assertThat(jsonFile).exists();
  }

  /**
   * A hostile agent's log tree under {@code logs}: {@value #FILES_PER_FORMAT} agents (named
   * {@code prefix-N}) with a file of each per-command format, and a control command's
   * well-formed refusal under {@code prefix-control}.
   *
   * @param srtFiles the srt record files, every line of which must come back as an event or a rejected line
   */
  record Tree(List<Path> srtFiles, String control) {}

  static Tree tree(Hostile h, Path logs, String prefix) throws IOException {
    List<Path> srtFiles = new ArrayList<>();
    for (int f = 0; f < FILES_PER_FORMAT; f++) {
      String agent = prefix + "-" + f;
      String id = CommandId.random();
      srtFiles.add(write(logs.resolve(agent).resolve(id + ".violations.jsonl"), () -> srtRecord(h, id)));
      write(logs.resolve(agent).resolve(id + ".stderr.log"), () -> transcriptLine(h));
      write(logs.resolve(agent).resolve(id + ".strace"), () -> straceLine(h));
      write(logs.resolve(agent).resolve(id + ".probe.jsonl"), () -> probeLine(h, id));
      write(logs.resolve(agent).resolve("access.log"), () -> squidLine(h, id));
    }
    String control = ("HostileControl" + h.random().nextInt(1000) + "xxxxxxxxxxxxxxxxxxxx").substring(0, 22);
    Files.writeString(Files.createDirectories(logs.resolve(prefix + "-control")).resolve(control + ".violations.jsonl"),
        "{\"line\":\"deny network-outbound pastebin.com:443 (host is not on the allow list)\",\"commandId\":\""
            + control + "\",\"timestamp\":\"2026-11-29T18:45:32.887Z\"}\n");
    return new Tree(srtFiles, control);
  }

  static void assertSafe(String s, int max, Object in) {
    if (s == null) {
      return;
    }
    assertThat(s.length()).as("length of a field of %s", in).isLessThanOrEqualTo(max);
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      boolean pair = Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1));
      if (pair) {
        i++;
        continue;
      }
      assertThat(Character.isISOControl(c) || Character.isSurrogate(c) || c == '\uFFFE' || c == '\uFFFF'
          || c >= '\u202A' && c <= '\u202E' || c >= '\u2066' && c <= '\u2069' || c == '\u2028' || c == '\u2029')
          .as("character U+%04X at %d of a field of %s", (int) c, i, in).isFalse();
    }
  }

  /** Writes {@link #LINES_PER_FILE} lines, each from {@code line} (text, or bytes one in eight). */
  private static Path write(Path file, Supplier<Object> line) throws IOException {
    Files.createDirectories(file.getParent());
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    for (int i = 0; i < LINES_PER_FILE; i++) {
      Object l = line.get();
      out.write(l instanceof byte[] b ? b : Hostile.line((String) l));
      if (l instanceof byte[]) {
        out.write('\n');
      }
    }
    return Files.write(file, out.toByteArray());
  }

  static List<byte[]> lines(byte[] all) {
    List<byte[]> out = new ArrayList<>();
    int start = 0;
    for (int i = 0; i < all.length; i++) {
      if (all[i] == '\n') {
        out.add(java.util.Arrays.copyOfRange(all, start, i));
        start = i + 1;
      }
    }
    return out;
  }

  private static Object srtRecord(Hostile h, String id) {
    String deny = switch (h.random().nextInt(5)) {
      case 0, 4 -> "deny network-outbound " + h.hostPort() + " (" + h.text() + ")";
      case 1 -> "deny http-request " + h.text() + " http://" + h.text() + " (" + h.text() + ")";
      case 2 -> "deny " + h.pick(List.of("openat", "unlinkat", "x")) + " /" + h.text();
      default -> h.text();
    };
    return switch (h.random().nextInt(10)) {
      case 0 -> h.bytes();
      case 1 -> "{\"line\":" + Hostile.json(deny) + ",\"timestamp\":" + h.pick(List.of("1", "[]", "{}", "null", "true")) + "}";
      case 2 -> {
        String full = "{\"line\":" + Hostile.json(deny) + ",\"command\":" + Hostile.json(h.text()) + "}";
        yield full.substring(0, h.random().nextInt(full.length()));
      }
      case 3 -> "{" + Hostile.json(h.text()) + ":" + Hostile.json(h.text()) + "}";
      default -> "{\"line\":" + Hostile.json(deny) + ",\"encodedCommand\":" + Hostile.json(h.text())
          + ",\"command\":" + Hostile.json(h.text()) + ",\"timestamp\":" + Hostile.json(h.time())
          + (h.random().nextBoolean() ? ",\"commandId\":" + Hostile.json(h.random().nextBoolean() ? id : h.text()) : "")
          + (h.random().nextBoolean() ? ",\"agentId\":" + Hostile.json(h.text()) : "") + "}";
    };
  }

  private static Object transcriptLine(Hostile h) {
    return switch (h.random().nextInt(12)) {
      case 0 -> h.bytes();
      case 1 -> "< HTTP/1.1 " + h.pick(List.of("403", "407", "400", "421", "503", "4O3", "-1", "99999999999")) + " " + h.text();
      case 2 -> "< X-Proxy-Error: " + h.text();
      case 3 -> "> CONNECT " + h.hostPort() + " HTTP/1.1";
      case 4 -> "* Proxy auth using Basic with user 'srt." + h.text() + "'";
      case 5 -> "<sandbox_violations>";
      case 6 -> "deny network-outbound " + h.hostPort() + " (" + h.text() + ")";
      case 7 -> "</sandbox_violations>";
      case 8 -> "2026/11/29 18:43:30 socat[8] E CONNECT " + h.hostPort() + ": " + h.text();
      case 9 -> "* Immediate connect fail for " + h.text() + ": Network is unreachable";
      case 10 -> "< Date: " + h.time();
      default -> h.text();
    };
  }

  private static Object straceLine(Hostile h) {
    String pid = h.pick(List.of("5", "[pid 12]", "99999999999", "-3", "x"));
    String time = h.pick(List.of("", "18:45:32 ", "18:45:32.123456 ", "1795978481.495 ", "99:99:99 "));
    return switch (h.random().nextInt(6)) {
      case 0 -> h.bytes();
      case 1 -> pid + " " + time + "connect(5, {sa_family=AF_INET, sin_port=htons(" + h.pick(List.of("443", "99999", "-1", "x"))
          + "), sin_addr=inet_addr(" + Hostile.json(h.text()) + ")}, 16) = -1 ENETUNREACH (Network is unreachable)";
      case 2 -> pid + " " + time + "openat(AT_FDCWD, " + Hostile.json(h.text()) + ", O_WRONLY|O_CREAT, 0666) = -1 EROFS ("
          + h.text() + ")";
      case 3 -> pid + " " + time + "connect(5, {sa_family=AF_INET6, sin6_port=htons(80), sin6_addr=inet_pton(AF_INET6, "
          + Hostile.json(h.text()) + ") <unfinished ...>";
      case 4 -> pid + " <... connect resumed>) = -1 EPERM (" + h.text() + ")";
      default -> h.text();
    };
  }

  private static Object probeLine(Hostile h, String id) {
    return h.random().nextInt(6) == 0 ? h.bytes()
        : "{\"probe\":" + Hostile.json(h.text()) + ",\"refused\":" + h.pick(List.of("true", "false", "\"no\"", "1"))
            + ",\"expected\":" + Hostile.json(h.text()) + ",\"observed\":" + Hostile.json(h.text()) + ",\"timestamp\":"
            + Hostile.json(h.time()) + ",\"commandId\":" + Hostile.json(h.random().nextBoolean() ? id : h.text()) + "}";
  }

  private static Object squidLine(Hostile h, String id) {
    return switch (h.random().nextInt(4)) {
      case 0 -> h.bytes();
      case 1 -> h.pick(List.of("1795978481.495", "1795978481.495", "-1.5", "x", "99999999999999999999.1"))
          + "      0 127.0.0.1 TCP_DENIED/" + h.pick(List.of("403", "403", "407", "200", "4O3", "")) + " 3495 CONNECT "
          + h.hostPort().replace(' ', '_') + " " + h.token() + " " + (h.random().nextBoolean() ? id : h.token())
          + " HIER_NONE/- text/html";
      case 2 -> "127.0.0.1 - - [" + h.time() + "] \"CONNECT " + h.hostPort() + " HTTP/1.1\" 403 3499 \"-\" \"" + h.text()
          + "\" TCP_DENIED:HIER_NONE";
      default -> h.text();
    };
  }

  private static Object envoyLine(Hostile h) {
    return h.random().nextInt(6) == 0 ? h.bytes()
        : "{\"authority\":" + Hostile.json(h.hostPort()) + ",\"response_code\":" + h.pick(List.of("403", "\"403\"", "-1",
            "99999999999", "4.03e2", "null", "[403]")) + ",\"x_command_id\":" + Hostile.json(h.random().nextBoolean()
            ? CommandId.random() : h.text()) + ",\"start_time\":" + Hostile.json(h.time()) + ",\"path\":"
            + Hostile.json(h.text()) + "}";
  }
}
