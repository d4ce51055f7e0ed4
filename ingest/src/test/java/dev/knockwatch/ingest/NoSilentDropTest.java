package dev.knockwatch.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.RejectedLine;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.events.config.KeyValues;
import dev.knockwatch.ingest.spi.FileOptions;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.SourceFormat;
import dev.knockwatch.ingest.tail.TailedLine;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * No line is dropped in silence, for any registered format, with no code per format. Every
 * format's samples, thousands of mutations of them (hostile characters put in, taken out, swapped:
 * NUL, lone surrogates, bidi overrides, CR, control bytes) and files of random bytes go through the
 * ingest agent as it runs; every byte of every file must come back as a line with one outcome
 * (events, a rejection with its code, or a skip whose reason the format declares), and every event
 * and rejection must reach the sink. A proxy's answer with X-Proxy-Error is a refusal however it is
 * laid out.
 */
class NoSilentDropTest {

  static final String HOSTILE = "\u0000\ud800\udfff\u202e\u2066\r\t\u001b\u0085 :/<>\"'\\%{}[]()-.0123456789aZ\u00e9\ufffd";

  record Outcome(TailedLine line, Parsed parsed) {}

  /**
   * Runs the agent over {@code files} (path under the logs dir → bytes), each read as {@code format}
   * with {@code with}'s keys (chosen by its name, as the log directory is read, where the format has
   * suffixes); checks the accounting; returns the sink.
   */
  static ListSink account(Path logs, Map<String, byte[]> files, SourceFormat format, KeyValues with) throws Exception {
    for (Map.Entry<String, byte[]> f : files.entrySet()) {
      Files.createDirectories(logs.resolve(f.getKey()).getParent());
      Files.write(logs.resolve(f.getKey()), f.getValue());
    }
    ListSink sink = new ListSink();
    List<Outcome> outcomes = new ArrayList<>();
    FileOptions options = new FileOptions(with, "", "", other -> false);
    IngestAgent agent = format.choice().suffixes().isEmpty()
        ? LogLayout.forFormat(logs, p -> true, format, () -> format.parser(options), sink, "host-a")
        : LogLayout.forLogDirectory(logs, p -> true, null, sink, "host-a", Duration.ZERO);
    agent.wholeFiles().observing((line, parsed) -> {
      synchronized (outcomes) {
        outcomes.add(new Outcome(line, parsed));
      }
    });
    try (agent) {
      while (agent.pollOnce() > 0) {
        // to the end of every file
      }
    }
    Set<String> declared = new TreeSet<>(Set.of("blank"));
    format.skips().forEach(k -> declared.add(k.reason()));
    // a line has its outcome; its file's last line may have a second, when the file went quiet with
    // a refusal half read (LineParser.end)
    Map<String, TreeMap<Long, List<Outcome>>> byFile = new TreeMap<>();
    for (Outcome o : outcomes) {
      byFile.computeIfAbsent(o.line().file(), k -> new TreeMap<>()).computeIfAbsent(o.line().offset(), k -> new ArrayList<>()).add(o);
    }
    int events = 0;
    int rejected = 0;
    for (Map.Entry<String, byte[]> f : files.entrySet()) {
      TreeMap<Long, List<Outcome>> lines = byFile.getOrDefault(f.getKey(), new TreeMap<>());
      long at = 0;
      for (Map.Entry<Long, List<Outcome>> l : lines.entrySet()) {
        assertThat(l.getKey()).as("%s: the line after byte %d", f.getKey(), at).isEqualTo(at);
        assertThat(l.getValue().size()).as("%s:%d outcomes", f.getKey(), at)
            .isEqualTo(l.getKey().equals(lines.lastKey()) ? l.getValue().size() : 1).isBetween(1, 2);
        at = l.getValue().get(0).line().end();
      }
      assertThat(at).as("%s: every byte read", f.getKey()).isEqualTo(f.getValue().length);
      for (Outcome o : lines.values().stream().flatMap(List::stream).toList()) {
        List<Parsed> each = o.parsed() instanceof Parsed.Several several
            ? several.parts().stream().map(Parsed.Part::outcome).toList() : List.of(o.parsed());
        if (o.parsed() instanceof Parsed.Several several) {
          assertThat(several.parts()).as("%s:%d holds records, so at least one", f.getKey(), o.line().offset())
              .isNotEmpty();
        }
        for (Parsed p : each) {
          if (p instanceof Parsed.Events e) {
            assertThat(e.events()).as("%s:%d yields events, so at least one", f.getKey(), o.line().offset()).isNotEmpty();
            events += e.events().size();
          } else if (p instanceof Parsed.Rejected r) {
            assertThat(r.code()).isNotNull();
            assertThat(r.reason()).isNotBlank();
            rejected++;
          } else {
            String reason = ((Parsed.Skipped) p).reason();
            assertThat(declared).as("%s:%d skipped as '%s', a reason %s declares", f.getKey(), o.line().offset(), reason,
                format.wireName()).contains(reason);
          }
        }
      }
    }
    // every event leaves as an event, or as a rejected line when its id does not pass
    // (and a refusal rejected for whose it is leaves a notice beside its rejected line: rule ingest-rejects)
    List<ViolationEvent> notices = sink.events.stream().filter(e -> e.unattributed() != null).toList();
    assertThat(sink.events.size() - notices.size() + sink.rejected.size()).isEqualTo(events + rejected);
    Set<String> rejectedLines = new java.util.HashSet<>();
    sink.rejected.forEach(r -> rejectedLines.add(r.file() + ":" + r.offset() + ":" + r.code()));
    for (ViolationEvent n : notices) {
      assertThat(rejectedLines).as("a notice stands beside its rejected line")
          .contains(n.origin().file() + ":" + n.origin().offset() + ":" + n.unattributed().code());
    }
    return sink;
  }

  static List<SourceFormat> formats() {
    return Formats.all();
  }

  /** The lines of every sample of {@code format}. */
  static List<String> corpus(SourceFormat format) throws IOException {
    List<String> lines = new ArrayList<>();
    for (Samples s : Samples.of(format)) {
      lines.addAll(new String(Files.readAllBytes(s.sample()), StandardCharsets.UTF_8).lines().toList());
    }
    assertThat(lines).as("%s's samples", format.wireName()).isNotEmpty();
    return lines;
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("formats")
  void samplesMutationsAndRandomBytesAreEachAccountedFor(SourceFormat format, @TempDir Path logs) throws Exception {
    List<String> corpus = corpus(format);
    Random random = new Random(format.wireName().hashCode());
    Map<String, byte[]> files = new TreeMap<>();
    files.put(name(format, 0), (String.join("\n", corpus) + "\n").getBytes(StandardCharsets.UTF_8));
    for (int f = 1; f <= 40; f++) {
      StringBuilder text = new StringBuilder();
      for (String line : corpus) {
        text.append(random.nextInt(4) == 0 ? Mangle.edits(line, HOSTILE, random) : line)
            .append(random.nextInt(10) == 0 ? "\r\n" : "\n");
      }
      if (random.nextBoolean()) {
        text.setLength(Math.max(0, text.length() - 1 - random.nextInt(20))); // cut off inside its last line
      }
      files.put(name(format, f), text.toString().getBytes(StandardCharsets.UTF_8));
    }
    for (int f = 41; f <= 50; f++) {
      byte[] noise = new byte[random.nextInt(70_000)];
      random.nextBytes(noise);
      files.put(name(format, f), noise);
    }
    account(logs, files, format, Samples.of(format).get(0).with());
  }

  /** A file of the layout for {@code format}: one command's, or a shared log's. */
  private static String name(SourceFormat format, int f) {
    List<String> suffixes = format.choice().suffixes();
    String suffix = suffixes.isEmpty() ? ".log" : suffixes.get(0);
    return format.perCommand() ? "agent-" + (f % 5) + "/" + String.format("Command%015d", f) + suffix
        : "proxy-" + f + "/" + (suffix.startsWith(".") ? "shared" + suffix : suffix);
  }

  /**
   * A proxy's refusal however a client recorded it: with or without the request before it, CRLF or
   * LF, its headers in any order, a chunked body or none, the file ending inside the body or right
   * after the headers: one refusal each, never nothing.
   */
  @Test
  void everyProxyAnswerWithItsDenyMarkIsARefusal(@TempDir Path logs) throws Exception {
    Random random = new Random(43);
    Map<String, byte[]> files = new TreeMap<>();
    int answers = 300;
    for (int f = 0; f < answers; f++) {
      String nl = random.nextBoolean() ? "\r\n" : "\n";
      StringBuilder t = new StringBuilder();
      boolean request = random.nextBoolean();
      if (request) {
        t.append(random.nextBoolean() ? "> CONNECT evil.example:443 HTTP/1.1" + nl : "> GET http://evil.example/x HTTP/1.1" + nl)
            .append("> Host: evil.example").append(nl).append(">").append(nl);
      }
      String p = request ? "< " : "";
      int status = new int[] {403, 403, 407, 400, 421, 503}[random.nextInt(6)];
      String phrase = random.nextBoolean() ? "Forbidden" : Mangle.edits("host is not on the allow list", HOSTILE.replace("\r", ""), random);
      t.append(p).append("HTTP/1.1 ").append(status).append(' ').append(phrase).append(nl);
      List<String> headers = new ArrayList<>(List.of("Content-Type: text/plain", "X-Proxy-Error: blocked-by-allowlist",
          "Date: Sun, 29 Nov 2026 18:42:56 GMT", "Connection: close"));
      java.util.Collections.shuffle(headers, random);
      for (String h : headers) {
        t.append(p).append(h).append(nl);
      }
      t.append(p.strip()).append(nl);
      if (!request || random.nextBoolean()) {
        int body = random.nextInt(3);
        if (body == 1) {
          t.append("Connection blocked by network allowlist");
        } else if (body == 2) {
          t.append("27").append(nl).append("Connection blocked by network allowlist").append(nl).append("0").append(nl).append(nl);
        }
      }
      files.put("agent-" + (f % 7) + "/" + String.format("ProxyAnswer%011d", f) + (random.nextBoolean() ? ".stderr.log" : ".curl.log"),
          t.toString().getBytes(StandardCharsets.UTF_8));
    }
    ListSink sink = account(logs, files, Formats.named("proxy-403").orElseThrow(), KeyValues.defaults(List.of()));
    Map<String, Integer> perFile = new TreeMap<>();
    sink.events.forEach(e -> perFile.merge(e.origin().file(), 1, Integer::sum));
    for (RejectedLine r : sink.rejected) {
      perFile.merge(r.file(), 1, Integer::sum);
    }
    Set<String> missing = new TreeSet<>(files.keySet());
    missing.removeAll(perFile.keySet());
    assertThat(missing).as("answers that made nothing: %s", missing.stream().limit(3)
        .map(m -> m + "=" + new String(files.get(m), StandardCharsets.UTF_8).replace("\r", "\\r").replace("\n", "\\n")).toList()).isEmpty();
    assertThat(perFile).hasSize(answers).allSatisfy((file, n) -> assertThat(n).as(file).isEqualTo(1));
    assertThat(sink.events).allSatisfy(e -> assertThat(e.proxyError()).isEqualTo("blocked-by-allowlist"));
  }

  /**
   * Issue 43: a refusal rejected for its identity is still seen. Its line goes to the rejected
   * topic with its code, and a notice keyed by its directory goes to detection (ingest-rejects),
   * the same key for every such refusal of the directory; a line that is no refusal leaves none.
   */
  @Test
  void aRefusalRejectedForWhoseItIsLeavesANoticeKeyedByItsDirectory(@TempDir Path logs) throws Exception {
    String deny = "{\"line\":\"deny network-outbound pastebin.com:443 (host is not on the allow list)\"}\n";
    Map<String, byte[]> files = new TreeMap<>();
    files.put("ci-runner-1\u2024x/LookAlike00000000000001.violations.jsonl", (deny + deny).getBytes(StandardCharsets.UTF_8));
    files.put("ci-runner-1\u2024x/LookAlike00000000000002.violations.jsonl", deny.getBytes(StandardCharsets.UTF_8));
    files.put("ci-runner-1/short.violations.jsonl", "{\"line\":\"deny openat /w/.bashrc\",\"commandId\":\"tooShort\"}\nnot json\n"
        .getBytes(StandardCharsets.UTF_8));
    ListSink sink = account(logs, files, Formats.named("srt-violation").orElseThrow(), KeyValues.defaults(List.of()));
    assertThat(sink.rejected).extracting(RejectedLine::code)
        .containsExactlyInAnyOrder("bad-agent-id", "bad-agent-id", "bad-agent-id", "short-command-id", "unparseable");
    assertThat(sink.events).hasSize(4).allSatisfy(e -> {
      assertThat(e.unattributed()).isNotNull();
      assertThat(e.agentId()).isNull();
      assertThat(e.commandId()).startsWith("ingest-rejects.").hasSizeGreaterThanOrEqualTo(22);
    });
    assertThat(sink.events).filteredOn(e -> e.unattributed().code().equals("bad-agent-id"))
        .extracting(ViolationEvent::commandId).containsOnly(ViolationEvent.unattributedCommandId("ci-runner-1\u2024x"));
    assertThat(sink.events).filteredOn(e -> e.unattributed().code().equals("short-command-id"))
        .extracting(e -> e.unattributed().directory()).containsExactly("ci-runner-1");
    assertThat(sink.events).extracting(ViolationEvent::eventId).doesNotHaveDuplicates();
  }



}
