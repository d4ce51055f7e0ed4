package dev.knockwatch.ingest.tail;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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

  /** Appends {@code text}, reads it and commits: the file is read up to here. */
  private void readAndCommit(FileTailer t, String text) throws IOException {
    append(text);
    t.poll(100);
    t.commit();
  }

  private void append(String text) throws IOException {
    Files.writeString(file, text, StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
  }

  private static List<String> texts(List<TailedLine> lines) {
    return lines.stream().map(TailedLine::text).toList();
  }

  /**
   * A paced file gives a second's worth of lines at once, then no more than its pace; a file that
   * is not paced is read in full beside it; every line of both is read once, in order.
   */
  @Test
  void aPacedFileIsReadAtItsPaceBesideTheOthersAndLosesNoLine() throws Exception {
    Path shared = root.resolve("agent-1/access.log");
    StringBuilder flood = new StringBuilder();
    StringBuilder other = new StringBuilder();
    for (int i = 0; i < 1_000; i++) {
      flood.append("f").append(i).append('\n');
      other.append("o").append(i).append('\n');
    }
    append(flood.toString());
    Files.writeString(shared, other);
    FileTailer t = new FileTailer(root, p -> p.startsWith(root.resolve("agent-1")), checkpoint, 64)
        .pace(p -> p.toString().endsWith(".jsonl"), 100);

    List<String> first = texts(t.poll(10_000));
    assertThat(first.stream().filter(l -> l.startsWith("f"))).as("a second's worth at once").hasSize(100);
    assertThat(first.stream().filter(l -> l.startsWith("o"))).as("an unpaced file, whole").hasSize(1_000);

    List<String> flooded = new java.util.ArrayList<>(first.stream().filter(l -> l.startsWith("f")).toList());
    long start = System.nanoTime();
    int polls = 0;
    while (flooded.size() < 1_000 && System.nanoTime() - start < 60_000_000_000L) {
      Thread.sleep(20);
      List<String> got = texts(t.poll(10_000));
      assertThat(got.size()).as("at most a second's worth a poll").isLessThanOrEqualTo(100);
      flooded.addAll(got);
      polls++;
    }
    assertThat(flooded).as("every line, once").hasSize(1_000).doesNotHaveDuplicates();
    assertThat(flooded).as("every line, once, in order")
        .containsExactlyElementsOf(flood.toString().lines().toList());
    assertThat(polls).as("900 more lines at 100 a second take many polls").isGreaterThan(20);
  }

  /**
   * A poll takes a fair share of each file's backlog first (a poll's lines over {@link
   * FileTailer#FAIR_SHARES}), then fills up from the files that had more, each in its order.
   */
  @Test
  void aBacklogInOneFileDoesNotKeepTheOthersWaitingAndNoLineIsLostOrRepeated() throws IOException {
    Path other = root.resolve("agent-1/other.violations.jsonl");
    StringBuilder a = new StringBuilder();
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < 3_000; i++) {
      a.append("a").append(i).append('\n');
      b.append(i < 150 ? "b" + i + "\n" : "");
    }
    append(a.toString());
    Files.writeString(other, b);
    FileTailer t = tailer();
    List<TailedLine> first = t.poll(2_000);
    int share = 2_000 / FileTailer.FAIR_SHARES;
    assertThat(first).hasSize(2_000);
    assertThat(texts(first.subList(0, share))).as("a fair share of the first file").startsWith("a0").endsWith("a" + (share - 1));
    assertThat(texts(first.subList(share, share + 150))).as("then all of the second").startsWith("b0").endsWith("b149");
    assertThat(texts(first.subList(share + 150, 2_000))).as("then the room left, from the first")
        .startsWith("a" + share).endsWith("a" + (2_000 - 150 - 1));
    List<String> rest = new java.util.ArrayList<>();
    for (List<TailedLine> more; !(more = t.poll(2_000)).isEmpty(); ) {
      rest.addAll(texts(more));
    }
    assertThat(rest).hasSize(3_000 + 150 - 2_000).startsWith("a" + (2_000 - 150)).endsWith("a2999");
  }

  /**
   * A file that grows while a poll reads it: the poll's second pass must not take the file's size
   * from before the first pass for a truncation (and read the file again from its start).
   */
  @Test
  void aFileGrowingDuringAPollIsReadOnceInOrder() throws Exception {
    Files.writeString(root.resolve("agent-1/other.violations.jsonl"), "x\n");
    int total = 100_000;
    Thread writer = new Thread(() -> {
      try (var out = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
        for (int i = 0; i < total; i++) {
          out.write("l" + i + "\n");
          if (i % 40 == 0) { // bursts smaller than a poll's share, often landing between its stat and its read
            out.flush();
            java.util.concurrent.locks.LockSupport.parkNanos(100_000);
          }
        }
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    });
    FileTailer t = tailer();
    writer.start();
    List<String> got = new java.util.ArrayList<>();
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (got.size() < total && System.nanoTime() < deadline) {
      for (TailedLine line : t.poll(400)) {
        if (line.file().endsWith("cmd.violations.jsonl")) {
          got.add(line.text());
        }
      }
    }
    writer.join();
    assertThat(got).hasSize(total);
    for (int i = 0; i < total; i++) {
      if (!got.get(i).equals("l" + i)) {
        throw new AssertionError("line " + i + " is " + got.get(i));
      }
    }
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
    readAndCommit(t, "first file, line one\n");
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

  private Path journal() {
    return root.resolve("checkpoint.json.journal");
  }

  /** A commit writes the files it moved, one journal line each, not every file known. */
  @Test
  void aCommitAppendsOnlyTheFilesItMovedToTheJournal() throws IOException {
    for (int f = 0; f < 50; f++) {
      Files.writeString(root.resolve("agent-1/c" + f + ".violations.jsonl"), "first " + f + "\n");
    }
    FileTailer t = tailer();
    assertThat(t.poll(1_000)).hasSize(50);
    int seen = Files.readAllLines(journal()).size(); // each new file, written down at first sight
    assertThat(seen).isEqualTo(50);
    t.commit();
    assertThat(Files.readAllLines(journal())).hasSize(seen + 50);
    Files.writeString(root.resolve("agent-1/c7.violations.jsonl"), "second 7\n", StandardOpenOption.APPEND);
    assertThat(texts(t.poll(1_000))).containsExactly("second 7");
    int polled = Files.readAllLines(journal()).size();
    t.commit();
    assertThat(Files.readAllLines(journal())).hasSize(polled + 1).last().asString().contains("c7.violations.jsonl");
    t.commit();
    assertThat(Files.readAllLines(journal())).as("nothing moved, nothing written").hasSize(polled + 1);
    Files.writeString(root.resolve("agent-1/c7.violations.jsonl"), "third 7\n", StandardOpenOption.APPEND);
    Files.writeString(root.resolve("agent-1/c9.violations.jsonl"), "second 9\n", StandardOpenOption.APPEND);
    assertThat(texts(tailer().poll(1_000))).as("a restart resumes after every committed line")
        .containsExactlyInAnyOrder("third 7", "second 9");
  }

  @Test
  void theCheckpointIsRewrittenWholeOnceTheJournalOutgrowsItAndResumesTheSame() throws IOException {
    FileTailer t = tailer();
    boolean folded = false;
    for (int i = 0; i < 2 * CheckpointStore.MIN_JOURNAL_ENTRIES && !folded; i++) {
      append(i + "\n");
      assertThat(t.poll(10)).hasSize(1);
      t.commit();
      assertThat(Files.exists(journal()) ? Files.readAllLines(journal()).size() : 0)
          .isLessThanOrEqualTo(CheckpointStore.MIN_JOURNAL_ENTRIES);
      folded = !Files.exists(journal());
    }
    assertThat(folded).as("folded into the checkpoint file once it held more entries than the bound").isTrue();
    append("after\n");
    assertThat(texts(tailer().poll(10))).containsExactly("after");
  }

  @Test
  void anUnfinishedLastJournalEntryIsIgnoredAndAnyOtherBadOneIsAClearError() throws IOException {
    FileTailer t = tailer();
    readAndCommit(t, "a\n");
    readAndCommit(t, "b\n");
    List<String> entries = Files.readAllLines(journal());
    assertThat(entries.size()).isGreaterThanOrEqualTo(2);
    String last = entries.get(entries.size() - 1);
    String torn = last.substring(0, last.length() / 2);
    Files.writeString(journal(), String.join("\n", entries.subList(0, entries.size() - 1)) + "\n" + torn);
    assertThat(texts(tailer().poll(10))).as("resumes at the last whole entry").containsExactly("b");

    Files.writeString(journal(), "not json\n" + entries.get(0) + "\n");
    assertThatThrownBy(this::tailer).isInstanceOf(java.io.UncheckedIOException.class)
        .hasMessageContaining("cannot read the ingest checkpoint journal " + journal() + ", line 1")
        .hasMessageContaining("to read every file from its start");
  }

  @Test
  void linesNotCommittedAreReadAgainAfterARestartOrARewind() throws IOException {
    FileTailer t = tailer();
    readAndCommit(t, "a\n");
    append("b\n");
    assertThat(texts(t.poll(100))).containsExactly("b");
    t.rewind();
    assertThat(texts(t.poll(100))).containsExactly("b");
    assertThat(texts(tailer().poll(100))).containsExactly("b");
  }

  /** Ingest rewinds after a batch Kafka did not take: the lines go again after the backoff, not at the next walk. */
  @Test
  void aRewoundFileIsReadAgainAtTheNextPollNotTheNextWalk() throws IOException {
    FileTailer t = tailer().walkAtMostEvery(Duration.ofHours(1));
    readAndCommit(t, "a\n");
    append("b\n");
    assertThat(texts(t.poll(100))).containsExactly("b");
    assertThat(t.poll(100)).as("nothing new: the file is idle, looked at again only by a walk").isEmpty();
    t.rewind();
    assertThat(texts(t.poll(100))).as("without a walk").containsExactly("b");
    assertThat(t.lastPollSawEveryFile()).isFalse();
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
  void betweenWalksOnlyTheBusyFilesAreReadAndTheNextWalkFindsTheRest() throws IOException {
    FileTailer t = tailer().walkAtMostEvery(Duration.ofHours(1));
    append("a\n");
    assertThat(texts(t.poll(100))).containsExactly("a");
    assertThat(t.lastPollSawEveryFile()).isTrue();
    Files.writeString(root.resolve("agent-1/new.violations.jsonl"), "new\n");
    append("b\n");
    assertThat(texts(t.poll(100))).as("the busy file, not the new one").containsExactly("b");
    assertThat(t.lastPollSawEveryFile()).isFalse();
    assertThat(t.poll(100)).isEmpty();
    assertThat(texts(t.poll(100, true))).as("a walk").containsExactly("new");
    assertThat(t.lastPollSawEveryFile()).isTrue();
  }

  /** A walk's poll is full after a few files: the others' unread lines are still read before the next walk. */
  @Test
  void filesAWalkHadNoRoomForAreReadBetweenWalksInOrderAndOnce() throws IOException {
    int files = 20;
    int lines = 1_000;
    for (int f = 0; f < files; f++) {
      StringBuilder b = new StringBuilder();
      for (int i = 0; i < lines; i++) {
        b.append(f).append('-').append(i).append('\n');
      }
      Files.writeString(root.resolve("agent-1/c" + f + ".violations.jsonl"), b);
    }
    FileTailer t = tailer().walkAtMostEvery(Duration.ofHours(1));
    List<String> got = new java.util.ArrayList<>();
    for (List<TailedLine> batch; !(batch = t.poll(5_000)).isEmpty(); ) {
      got.addAll(texts(batch));
    }
    assertThat(got).hasSize(files * lines).doesNotHaveDuplicates();
    for (int f = 0; f < files; f++) {
      String prefix = f + "-";
      assertThat(got.stream().filter(s -> s.startsWith(prefix)).toList()).as("file %d in order", f)
          .isEqualTo(java.util.stream.IntStream.range(0, lines).mapToObj(i -> prefix + i).toList());
    }
  }

  @Test
  void aBatchStopsAtItsLimitAndTheNextPollGoesOn() throws IOException {
    FileTailer t = tailer();
    append("1\n2\n3\n4\n5\n");
    assertThat(texts(t.poll(2))).containsExactly("1", "2");
    assertThat(texts(t.poll(10))).containsExactly("3", "4", "5");
  }

  @Test
  void aLineLongerThanTheBoundKeepsItsStartAndItsEndAndIsFlagged() throws IOException {
    FileTailer t = tailer();
    append("a".repeat(100) + "b".repeat(100) + "\nnext\n");
    List<TailedLine> lines = t.poll(100);
    assertThat(lines).hasSize(2);
    assertThat(lines.get(0).truncated()).isTrue();
    assertThat(lines.get(0).text()).isEqualTo("a".repeat(32) + " … " + "b".repeat(27));
    assertThat(lines.get(0).text().getBytes(java.nio.charset.StandardCharsets.UTF_8)).hasSizeLessThanOrEqualTo(64);
    assertThat(lines.get(1).text()).isEqualTo("next");
    assertThat(lines.get(1).truncated()).isFalse();
  }

  @Test
  void aLongLineSpreadOverChunksKeepsItsEndAndNoCharacterIsCutInHalf() throws IOException {
    FileTailer t = tailer();
    // é is two bytes: however the halves fall, no half character is kept
    append("é".repeat(50_000) + "END\n" + "ok\n");
    List<TailedLine> lines = t.poll(100);
    assertThat(lines).extracting(TailedLine::text).containsExactly(lines.get(0).text(), "ok");
    assertThat(lines.get(0).text()).startsWith("éé").contains(" … ").endsWith("éEND").doesNotContain("\uFFFD");
    assertThat(lines.get(0).invalidUtf8()).isFalse();
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

  // Rotation, as logrotate does it: each line's content is unique, and every test counts the lines
  // read by content, so a line lost or read twice fails it.

  private Path rotated(String suffix) {
    return file.resolveSibling(file.getFileName() + suffix);
  }

  @Test
  void mvRotationReadsTheOldFileToItsEndThenTheNewOneAndNothingTwice() throws IOException {
    FileTailer t = tailer();
    readAndCommit(t, "line-1\nline-2\n");
    append("line-3\n"); // appended just before the move, not read yet
    Files.move(file, rotated(".1"));
    append("line-4\n");
    List<String> read = new java.util.ArrayList<>(texts(t.poll(100)));
    t.commit();
    append("line-5\n");
    read.addAll(texts(t.poll(100)));
    read.addAll(texts(t.poll(100)));
    assertThat(read).containsExactly("line-3", "line-4", "line-5");
  }

  @Test
  void aFileMovedAwayWithNothingInItsPlaceIsReadToItsEndUnderItsNewName() throws IOException {
    FileTailer t = tailer();
    readAndCommit(t, "line-1\n");
    append("line-2\n");
    Files.move(file, rotated("-20261130"));
    assertThat(texts(t.poll(100))).containsExactly("line-2");
    append("line-3\n"); // the writer opens the name anew
    assertThat(texts(t.poll(100))).containsExactly("line-3");
    assertThat(t.poll(100)).isEmpty();
  }

  @Test
  void copytruncateReadsWhatFollowsOnceAndTheCopyOnlyPastWhatWasRead() throws IOException {
    FileTailer t = tailer();
    readAndCommit(t, "line-1\nline-2\n");
    append("line-3\n"); // appended just before the copy
    Files.copy(file, rotated(".1"));
    Files.writeString(file, "", StandardOpenOption.TRUNCATE_EXISTING);
    append("line-4\n");
    List<String> read = new java.util.ArrayList<>(texts(t.poll(100)));
    t.commit();
    append("line-5\n"); // the first append after the truncation: not a new file to read again
    read.addAll(texts(t.poll(100)));
    append("line-6\n");
    read.addAll(texts(t.poll(100)));
    assertThat(read).containsExactlyInAnyOrder("line-3", "line-4", "line-5", "line-6");
  }

  @Test
  void aRotationWhileTheTailerWasStoppedLosesAndRepeatsNothing() throws IOException {
    readAndCommit(tailer(), "line-1\nline-2\n");
    append("line-3\n");
    Files.move(file, rotated(".1"));
    append("line-4\n");
    assertThat(texts(tailer().poll(100))).containsExactlyInAnyOrder("line-3", "line-4");

    FileTailer again = tailer();
    again.poll(100);
    again.commit();
    append("line-5\n");
    Files.copy(file, rotated(".2"));
    Files.writeString(file, "", StandardOpenOption.TRUNCATE_EXISTING);
    append("line-6\n");
    assertThat(texts(tailer().poll(100))).containsExactlyInAnyOrder("line-5", "line-6");
  }

  @Test
  void twoRotationsBetweenPollsAreFollowedAndCompressedOnesNeverRead() throws IOException {
    FileTailer t = tailer();
    readAndCommit(t, "line-1\n");
    append("line-2\n");
    Files.move(file, rotated(".1"));
    append("line-3\n");
    Files.move(rotated(".1"), rotated(".2"));
    Files.move(file, rotated(".1"));
    append("line-4\n");
    Files.writeString(rotated(".3.gz"), "\u001f\u008bnot lines\n");
    List<String> read = new java.util.ArrayList<>();
    for (int i = 0; i < 3; i++) {
      read.addAll(texts(t.poll(100)));
    }
    assertThat(read).containsExactlyInAnyOrder("line-2", "line-3", "line-4");
  }

  @Test
  void rotatedNamesAreTheirStreams() {
    assertThat(FileTailer.rotatedFrom("access.log.1")).isEqualTo("access.log");
    assertThat(FileTailer.rotatedFrom("x.violations.jsonl.12")).isEqualTo("x.violations.jsonl");
    assertThat(FileTailer.rotatedFrom("access.log-20261130")).isEqualTo("access.log");
    assertThat(FileTailer.rotatedFrom("access.log-2026113023")).isEqualTo("access.log");
    assertThat(FileTailer.rotatedFrom("access.log")).isNull();
    assertThat(FileTailer.rotatedFrom("x.violations.jsonl")).isNull();
  }
}
