package dev.knockwatch.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.RejectedLine;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.spi.FileOptions;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.SourceFormat;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The one runner of every format's samples (as Elastic's pipeline tests run each integration's
 * {@code test-*.log} against its {@code -expected.json}): each sample is read as ingest reads it —
 * laid under a logs root where its config says, its format's parser made with its keys, the file
 * finished — and the outcome of every line (its events as published, but for their ids and ingest
 * time; its skips with their reasons; its rejections with their codes) must equal the expectation
 * beside it. {@code -Dknockwatch.samples.write=true} writes the expectations instead (review the
 * diff before committing it).
 */
class FormatSamplesTest {

  /** A line with no time of its own is stamped with its file's time, this one, so the outcome is the same every run. */
  static final Instant FILE_TIME = Instant.parse("2026-11-29T18:00:00Z");
  private static final boolean WRITE = Boolean.getBoolean("knockwatch.samples.write");

  static List<Samples> samples() {
    return Samples.all();
  }

  @Test
  void everyFormatHasSamplesAndEverySampleItsExpectation() {
    for (SourceFormat f : Formats.all()) {
      assertThat(Samples.of(f)).as("%s has samples in its folder's test resources", f.wireName()).isNotEmpty();
    }
    if (!WRITE) {
      assertThat(Samples.all()).allSatisfy(s -> assertThat(s.expected()).as("expected outcome of %s", s).exists());
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("samples")
  void everyLineHasItsExpectedOutcome(Samples s, @TempDir Path logs) throws Exception {
    ObjectNode actual = outcomes(s, logs);
    if (WRITE) {
      Files.writeString(s.expectedInSources(), write(actual));
      return;
    }
    JsonNode expected = Json.MAPPER.readTree(Files.readString(s.expected()));
    assertThat(actual.get("file")).isEqualTo(expected.get("file"));
    JsonNode want = expected.get("lines");
    JsonNode got = actual.get("lines");
    for (int i = 0; i < Math.max(want.size(), got.size()); i++) {
      assertThat(got.get(i)).as("%s, outcome %d of %d expected", s, i + 1, want.size()).isEqualTo(want.get(i));
    }
  }

  /** What ingest publishes of the sample, and each line's skips by offset. */
  record Read(byte[] bytes, ListSink sink, Map<Long, List<String>> skipped) {}

  static Read read(Samples s, Path logs) throws Exception {
    byte[] bytes = Files.readAllBytes(s.sample());
    Path file = logs.resolve(s.file());
    Files.createDirectories(file.getParent());
    Files.write(file, bytes);
    Files.setLastModifiedTime(file, FileTime.from(FILE_TIME));
    String name = file.getFileName().toString();
    FileOptions options = new FileOptions(s.with(), s.file(), Formats.stem(s.format(), name),
        other -> Files.exists(logs.resolve(other)));
    ListSink sink = new ListSink();
    Map<Long, List<String>> skipped = new TreeMap<>();
    IngestAgent agent = LogLayout.forFormat(logs, p -> true, s.format(), () -> s.format().parser(options),
        sink, "sample-host").wholeFiles().untimedFromFiles().observing((line, parsed) -> {
          if (parsed instanceof Parsed.Skipped k) {
            skipped.computeIfAbsent(line.offset(), o -> new ArrayList<>()).add(k.reason());
          } else if (parsed instanceof Parsed.Several several) { // a line of records: each record's skip
            several.parts().stream().filter(part -> part.outcome() instanceof Parsed.Skipped)
                .forEach(part -> skipped.computeIfAbsent(line.offset(), o -> new ArrayList<>())
                    .add(((Parsed.Skipped) part.outcome()).reason()));
          }
        });
    try (agent) {
      while (agent.pollOnce() > 0) {
        // to the end of the sample
      }
    }
    return new Read(bytes, sink, skipped);
  }

  /** What ingest makes of the sample, line by line. */
  static ObjectNode outcomes(Samples s, Path logs) throws Exception {
    Read read = read(s, logs);
    byte[] bytes = read.bytes();
    ListSink sink = read.sink();
    Map<Long, List<String>> skipped = read.skipped();
    Map<Long, List<ViolationEvent>> events = new TreeMap<>();
    sink.events.stream().filter(e -> e.unattributed() == null)
        .forEach(e -> events.computeIfAbsent(e.origin().offset(), o -> new ArrayList<>()).add(e));
    Map<Long, List<RejectedLine>> rejected = new TreeMap<>();
    sink.rejected.forEach(r -> rejected.computeIfAbsent(r.offset(), o -> new ArrayList<>()).add(r));

    ObjectNode out = Json.MAPPER.createObjectNode();
    out.put("file", s.file());
    ArrayNode lines = out.putArray("lines");
    long offset = 0;
    int number = 0;
    while (offset < bytes.length) {
      number++;
      ObjectNode line = Json.MAPPER.createObjectNode();
      line.put("line", number);
      for (String reason : skipped.getOrDefault(offset, List.of())) {
        line.withArray("skipped").add(reason);
      }
      for (ViolationEvent e : events.getOrDefault(offset, List.of())) {
        // through its text, as the expectation is read: numbers as JSON has them, not as Java typed them
        ObjectNode event = (ObjectNode) Json.MAPPER.readTree(Json.write(e));
        event.remove("eventId");
        event.remove("ingestedAt");
        line.withArray("events").add(event);
      }
      for (RejectedLine r : rejected.getOrDefault(offset, List.of())) {
        line.withArray("rejected").add(r.code());
      }
      assertThat(line.size()).as("%s: line %d has an outcome", s, number).isGreaterThan(1);
      lines.add(line);
      offset = next(bytes, offset);
    }
    return out;
  }

  /** The offset after the line starting at {@code from}: past its LF. */
  private static long next(byte[] bytes, long from) {
    for (int i = (int) from; i < bytes.length; i++) {
      if (bytes[i] == '\n') {
        return i + 1;
      }
    }
    return bytes.length;
  }

  /** One line's outcome a line of the file, so that a change reads as a diff of the lines it changed. */
  private static String write(ObjectNode actual) throws IOException {
    StringBuilder b = new StringBuilder("{\"file\": ").append(Json.MAPPER.writeValueAsString(actual.get("file")))
        .append(",\n \"lines\": [\n");
    JsonNode lines = actual.get("lines");
    for (int i = 0; i < lines.size(); i++) {
      b.append("  ").append(Json.MAPPER.writeValueAsString(lines.get(i))).append(i + 1 < lines.size() ? ",\n" : "\n");
    }
    return b.append(" ]}\n").toString();
  }
}
