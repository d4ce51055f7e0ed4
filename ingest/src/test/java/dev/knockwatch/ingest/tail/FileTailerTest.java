package dev.knockwatch.ingest.tail;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileTailerTest {

  @TempDir Path root;
  Path file;
  Path checkpoint;

  @BeforeEach
  void setUp() throws IOException {
    Files.createDirectories(root.resolve("agent-1"));
    file = root.resolve("agent-1/cmd.violations.jsonl");
    checkpoint = root.resolve("checkpoint.json");
  }

  private FileTailer tailer() {
    return new FileTailer(root, p -> p.toString().endsWith(".violations.jsonl"), checkpoint, 64);
  }

  private void append(String text) throws IOException {
    Files.writeString(file, text, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
  }

  private static List<String> texts(List<TailedLine> lines) {
    return lines.stream().map(TailedLine::text).toList();
  }

  @Test
  void aPartialLastLineWaitsForItsNewline() throws IOException {
    FileTailer t = tailer();
    append("one\ntw");
    assertThat(texts(t.poll(100))).containsExactly("one");
    assertThat(t.poll(100)).isEmpty();
    append("o\n");
    List<TailedLine> lines = t.poll(100);
    assertThat(texts(lines)).containsExactly("two");
    assertThat(lines.get(0).offset()).isEqualTo(4);
    assertThat(lines.get(0).file()).isEqualTo("agent-1/cmd.violations.jsonl");
  }

  @Test
  void aLastLineLeftWithoutNewlineIsReturnedOnceTheFileStopsGrowing() throws IOException {
    FileTailer t = new FileTailer(root, p -> p.toString().endsWith(".violations.jsonl"), checkpoint, 64, Duration.ZERO);
    append("one\ntw");
    assertThat(texts(t.poll(100))).as("the file just grew: wait").containsExactly("one");
    assertThat(texts(t.poll(100))).as("not grown since: flush").containsExactly("tw");
    append("o\n");
    assertThat(texts(t.poll(100))).containsExactly("o");
  }

  @Test
  void crlfAndLfBothEndALine() throws IOException {
    FileTailer t = tailer();
    append("a\r\nb\nc\r\n");
    List<TailedLine> lines = t.poll(100);
    assertThat(texts(lines)).containsExactly("a", "b", "c");
    assertThat(lines).extracting(TailedLine::offset).containsExactly(0L, 3L, 5L);
  }

  @Test
  void aTruncatedFileIsReadAgainFromItsStart() throws IOException {
    FileTailer t = tailer();
    append("first line\nsecond line\n");
    assertThat(t.poll(100)).hasSize(2);
    Files.writeString(file, "new\n", StandardCharsets.UTF_8, StandardOpenOption.TRUNCATE_EXISTING);
    assertThat(texts(t.poll(100))).containsExactly("new");
  }

  @Test
  void aRotatedFileIsReadFromItsStart() throws IOException {
    FileTailer t = tailer();
    append("old-1\nold-2\nold-3\n");
    assertThat(t.poll(100)).hasSize(3);
    Files.move(file, root.resolve("agent-1/cmd.violations.jsonl.1"));
    append("fresh\n");
    assertThat(texts(t.poll(100))).containsExactly("fresh");
  }

  @Test
  void aFileRewrittenInPlaceWithOtherContentIsReadFromItsStart() throws IOException {
    FileTailer t = tailer();
    append("first file, line one\n");
    t.poll(100);
    t.commit();
    // same inode, same or larger size, other bytes: what a reused inode looks like to the tailer
    Files.writeString(file, "other file, line one\nline two\n", StandardCharsets.UTF_8, StandardOpenOption.TRUNCATE_EXISTING);
    assertThat(texts(tailer().poll(100))).containsExactly("other file, line one", "line two");
  }

  @Test
  void committedPositionsSurviveARestart() throws IOException {
    FileTailer t = tailer();
    append("a\nb\n");
    assertThat(t.poll(100)).hasSize(2);
    t.commit();
    append("c\n");
    assertThat(texts(tailer().poll(100))).containsExactly("c");
  }

  @Test
  void linesNotCommittedAreReadAgainAfterARestartOrARewind() throws IOException {
    FileTailer t = tailer();
    append("a\n");
    t.poll(100);
    t.commit();
    append("b\n");
    assertThat(texts(t.poll(100))).containsExactly("b");
    t.rewind();
    assertThat(texts(t.poll(100))).containsExactly("b");
    assertThat(texts(tailer().poll(100))).containsExactly("b");
  }

  @Test
  void aMarkCommitsUpToItselfWhileReadingGoesOn() throws IOException {
    FileTailer t = tailer();
    append("a\n");
    t.poll(100);
    FileTailer.Mark afterA = t.mark();
    append("b\n");
    assertThat(texts(t.poll(100))).containsExactly("b");
    t.commit(afterA);
    assertThat(texts(tailer().poll(100))).containsExactly("b");
    t.rewind();
    assertThat(texts(t.poll(100))).containsExactly("b");
  }

  @Test
  void aMarkTakenBeforeATruncationDoesNotMoveTheNewContent() throws IOException {
    FileTailer t = tailer();
    append("first line\nsecond line\n");
    t.poll(100);
    FileTailer.Mark old = t.mark();
    Files.writeString(file, "new\n");
    assertThat(texts(t.poll(100))).containsExactly("new");
    t.commit(old);
    assertThat(texts(tailer().poll(100))).containsExactly("new");
  }

  @Test
  void aBatchStopsAtItsLimitAndTheNextPollGoesOn() throws IOException {
    FileTailer t = tailer();
    append("1\n2\n3\n4\n5\n");
    assertThat(texts(t.poll(2))).containsExactly("1", "2");
    assertThat(texts(t.poll(10))).containsExactly("3", "4", "5");
  }

  @Test
  void aLineLongerThanTheBoundIsReturnedCutAndFlagged() throws IOException {
    FileTailer t = tailer();
    append("x".repeat(200) + "\nnext\n");
    List<TailedLine> lines = t.poll(100);
    assertThat(lines).hasSize(2);
    assertThat(lines.get(0).truncated()).isTrue();
    assertThat(lines.get(0).text()).hasSize(64);
    assertThat(lines.get(1).text()).isEqualTo("next");
    assertThat(lines.get(1).truncated()).isFalse();
  }

  @Test
  void aWriterThatNeverEndsItsLineCannotMakeTheTailerBufferWithoutLimit() throws IOException {
    FileTailer t = tailer();
    append("y".repeat(100_000));
    List<TailedLine> lines = t.poll(100);
    assertThat(lines).hasSize(1);
    assertThat(lines.get(0).truncated()).isTrue();
    append("yyyy\nafter\n");
    assertThat(texts(t.poll(100))).containsExactly("after");
  }

  @Test
  void lagIsTheBytesNotReadYet() throws IOException {
    FileTailer t = tailer();
    append("abc\n");
    t.poll(100);
    append("de");
    assertThat(t.lagBytes()).isEqualTo(2);
  }

  @Test
  void filesThatDoNotMatchAreIgnored() throws IOException {
    Files.writeString(root.resolve("agent-1/cmd.stderr.log"), "noise\n");
    append("kept\n");
    assertThat(texts(tailer().poll(100))).containsExactly("kept");
  }

  @Test
  void invalidUtf8IsReplacedNotFatal() throws IOException {
    Files.write(file, new byte[] {'o', 'k', (byte) 0xC3, (byte) 0x28, '\n'});
    List<TailedLine> lines = tailer().poll(100);
    assertThat(texts(lines)).containsExactly("ok\uFFFD(");
    assertThat(lines.get(0).invalidUtf8()).isTrue();
  }
}
