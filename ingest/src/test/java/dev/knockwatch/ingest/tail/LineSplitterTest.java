package dev.knockwatch.ingest.tail;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The tailer's line splitting, bytes in and lines out, without a file. */
class LineSplitterTest {

  record Line(long start, long end, String text, boolean cut) {}

  private final List<Line> lines = new ArrayList<>();
  private final LineSplitter.Lines into = (start, end, bytes, from, length, cut) ->
      lines.add(new Line(start, end, new String(bytes, from, length, StandardCharsets.UTF_8), cut));

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void aLineAcrossChunksIsGatheredAndOffsetsAreTheFiles() {
    LineSplitter split = new LineSplitter(1024);
    split.start(100, false);
    split.feed(b("ab\ncd"), 5, 10, into);
    split.feed(b("e\n"), 2, 10, into);
    assertThat(lines).containsExactly(new Line(100, 103, "ab", false), new Line(103, 107, "cde", false));
    assertThat(split.position()).isEqualTo(107);
  }

  @Test
  void itStopsAtMaxLinesAndTheReaderGoesOnFromThePosition() {
    LineSplitter split = new LineSplitter(1024);
    split.start(0, false);
    assertThat(split.feed(b("a\nb\nc\n"), 6, 2, into)).isEqualTo(2);
    assertThat(split.position()).isEqualTo(4);
    split.start(split.position(), false);
    split.feed(b("c\n"), 2, 2, into);
    assertThat(lines).extracting(Line::text).containsExactly("a", "b", "c");
    assertThat(lines.get(2).start()).isEqualTo(4);
  }

  @Test
  void aLinePastTheBoundKeepsItsStartAndItsEnd() {
    LineSplitter split = new LineSplitter(16);
    split.start(0, false);
    byte[] text = b("0123456789abcdefghijklmnopqrstuvwxyz\n");
    split.feed(text, 10, 10, into);
    split.feed(Arrays.copyOfRange(text, 10, text.length), text.length - 10, 10, into);
    assertThat(lines).singleElement().satisfies(l -> {
      assertThat(l.cut()).isTrue();
      assertThat(l.text()).isEqualTo("01234567 … xyz"); // half the bound of its start, what is left of it of its end
      assertThat(l.end()).isEqualTo(text.length);
    });
  }

  @Test
  void aCutLineWithoutItsNewlineIsGivenAndItsRestSkipped() {
    LineSplitter split = new LineSplitter(16);
    split.start(0, false);
    split.feed(b("x".repeat(40)), 40, 10, into);
    assertThat(lines).isEmpty();
    assertThat(split.end(into)).isTrue();
    assertThat(lines).singleElement().satisfies(l -> {
      assertThat(l.cut()).isTrue();
      assertThat(l.end()).isEqualTo(40);
    });
    assertThat(split.discarding()).isTrue();
    assertThat(split.position()).isEqualTo(40);
    // the next read: the rest of that line up to its newline is skipped
    split.start(40, true);
    split.feed(b("yyy\nnext\n"), 9, 10, into);
    assertThat(lines).hasSize(2).last().isEqualTo(new Line(44, 49, "next", false));
    assertThat(split.discarding()).isFalse();
  }

  @Test
  void aLastLineWithoutItsNewlineWaitsUnlessTheWriterStopped() {
    LineSplitter split = new LineSplitter(1024);
    split.start(0, false);
    split.feed(b("done\npartial"), 12, 10, into);
    assertThat(split.end(into)).as("a short partial line is not cut").isFalse();
    assertThat(split.flushAt(20, into)).as("the file is longer than what was read").isFalse();
    assertThat(split.flushAt(12, into)).isTrue();
    assertThat(lines).containsExactly(new Line(0, 5, "done", false), new Line(5, 12, "partial", false));
    assertThat(split.position()).isEqualTo(12);
  }

  @Test
  void randomBytesInRandomChunksSplitExactlyAtTheirNewlines() {
    Random random = new Random(7);
    for (int round = 0; round < 500; round++) {
      byte[] data = new byte[random.nextInt(4000)];
      random.nextBytes(data);
      for (int i = 0; i < data.length; i++) {
        if (random.nextInt(20) == 0) {
          data[i] = '\n';
        }
      }
      int bound = 1 + random.nextInt(300);
      lines.clear();
      LineSplitter split = new LineSplitter(bound);
      split.start(0, false);
      for (int at = 0; at < data.length; ) {
        int n = Math.min(data.length - at, 1 + random.nextInt(700));
        split.feed(Arrays.copyOfRange(data, at, at + n), n, Integer.MAX_VALUE, into);
        at += n;
      }
      // every newline ends exactly one line, the lines follow each other, and a line within the bound is whole
      List<Integer> newlines = new ArrayList<>();
      for (int i = 0; i < data.length; i++) {
        if (data[i] == '\n') {
          newlines.add(i);
        }
      }
      assertThat(lines).hasSize(newlines.size());
      long start = 0;
      for (int i = 0; i < lines.size(); i++) {
        Line l = lines.get(i);
        assertThat(l.start()).isEqualTo(start);
        assertThat(l.end()).isEqualTo(newlines.get(i) + 1);
        int length = (int) (l.end() - 1 - l.start());
        assertThat(l.cut()).isEqualTo(length > bound);
        if (!l.cut()) {
          assertThat(l.text()).isEqualTo(new String(data, (int) l.start(), length, StandardCharsets.UTF_8));
        }
        start = l.end();
      }
      assertThat(split.position()).isEqualTo(start);
    }
  }
}
