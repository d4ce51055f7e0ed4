package dev.knockwatch.ingest.tail;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The walk with the kernel's watch: an unchanged tree is not walked again (only every
 * {@link TreeWalk#QUIET_WALK}), and a file created, written or removed at any depth, in a
 * directory made after the walk too, makes the next spaced walk happen.
 */
class TreeWalkTest {

  @TempDir Path root;

  private static List<TreeWalk.Found> walk(TreeWalk w) {
    return w.walk(System.nanoTime(), (p, a) -> a.isRegularFile());
  }

  /** Polls {@code due} as the tailer does (every 10 ms) until it says walk, for at most 2 s (less than the quiet walk). */
  private static boolean dueWithin2s(TreeWalk w) throws InterruptedException {
    for (int i = 0; i < 200; i++) {
      if (w.due(System.nanoTime())) {
        return true;
      }
      Thread.sleep(10);
    }
    return false;
  }

  /** Polls for 300 ms: whether any poll said walk. */
  private static boolean dueInThe300msAfter(TreeWalk w) throws InterruptedException {
    boolean due = false;
    for (int i = 0; i < 30; i++) {
      due |= w.due(System.nanoTime());
      Thread.sleep(10);
    }
    return due;
  }

  @Test
  void anUnchangedTreeIsNotWalkedAgainAndAnyChangeIsSeen() throws Exception {
    Files.createDirectories(root.resolve("agent-1"));
    Files.writeString(root.resolve("agent-1/a.violations.jsonl"), "x\n");
    try (TreeWalk w = new TreeWalk(root)) {
      w.atMostEvery(Duration.ofMillis(1));
      w.watchChanges();
      assertThat(walk(w)).hasSize(1);
      assertThat(dueInThe300msAfter(w)).as("an unchanged tree, walked again").isFalse();
      assertThat(w.unchangedSinceWalk()).isTrue();

      Files.writeString(root.resolve("agent-1/a.violations.jsonl"), "y\n", java.nio.file.StandardOpenOption.APPEND);
      assertThat(dueWithin2s(w)).as("a line appended").isTrue();
      assertThat(w.unchangedSinceWalk()).isFalse();
      walk(w);

      Files.createDirectories(root.resolve("agent-2"));
      assertThat(dueWithin2s(w)).as("a directory made").isTrue();
      walk(w); // watches it
      assertThat(dueInThe300msAfter(w)).isFalse();
      Files.writeString(root.resolve("agent-2/b.violations.jsonl"), "z\n");
      assertThat(dueWithin2s(w)).as("a file made in the new directory").isTrue();
      assertThat(walk(w)).hasSize(2);

      Files.delete(root.resolve("agent-1/a.violations.jsonl"));
      assertThat(dueWithin2s(w)).as("a file removed").isTrue();
      assertThat(walk(w)).hasSize(1);
    }
  }

  /** An idle agent waits on the kernel: a file written ends the wait, and so does {@code wake} (close). */
  @Test
  void aWaitEndsWhenAFileIsWrittenOrWhenWoken() throws Exception {
    Files.createDirectories(root.resolve("agent-1"));
    try (TreeWalk w = new TreeWalk(root)) {
      w.atMostEvery(Duration.ofMillis(1));
      w.watchChanges(Duration.ofHours(1)); // no quiet walk ends a wait here: only the kernel or wake
      walk(w);
      boolean[] waited = new boolean[1];
      Thread waiter = new Thread(() -> {
        try {
          waited[0] = w.awaitChange(Duration.ofMinutes(5));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
      waiter.start();
      Thread.sleep(100);
      Files.writeString(root.resolve("agent-1/a.violations.jsonl"), "x\n");
      waiter.join(60_000);
      assertThat(waiter.isAlive()).as("still waiting after the write").isFalse();
      assertThat(waited[0]).isTrue();
      // due once the walks' pacing allows (a tenth of the time: the first walk on a loaded machine
      // may space the next one past the write), not at the quiet walk an hour away
      assertThat(dueWithin2s(w)).as("the write makes the next walk").isTrue();
      walk(w);
      Thread.sleep(200); // the write's later events, if any, drained and walked
      w.due(System.nanoTime());
      walk(w);

      Thread sleeper = new Thread(() -> {
        try {
          w.awaitChange(Duration.ofMinutes(5));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      });
      sleeper.start();
      Thread.sleep(100);
      w.wake();
      sleeper.join(60_000);
      assertThat(sleeper.isAlive()).as("still waiting after wake").isFalse();
      assertThat(w.awaitChange(Duration.ofMinutes(5))).as("woken: nothing watched, no wait").isFalse();
    }
  }

  /**
   * A directory removed between the walk's listing and the watch's registration (a race whoever
   * writes the tree can run at will) must not end the watching, else every idle poll walks the
   * whole tree again, for good.
   */
  @Test
  void aDirectoryGoneBeforeItIsWatchedDoesNotEndTheWatching() throws Exception {
    Files.createDirectories(root.resolve("agent-1"));
    try (TreeWalk w = new TreeWalk(root)) {
      w.atMostEvery(Duration.ofMillis(1));
      w.watchChanges(Duration.ofHours(1));
      walk(w);
      w.watch(root.resolve("agent-1/\u202Egone\n")); // listed, then removed before the watch
      assertThat(dueInThe300msAfter(w)).as("still watching: an unchanged tree is not walked").isFalse();
      Files.writeString(root.resolve("agent-1/a.violations.jsonl"), "x\n");
      assertThat(dueWithin2s(w)).as("and a change is still seen").isTrue();
    }
  }

  /** A directory removed and made again under the same name is watched again: a line written in it is seen. */
  @Test
  void aDirectoryRemovedAndMadeAgainIsWatchedAgain() throws Exception {
    Path agent = Files.createDirectories(root.resolve("agent-1"));
    try (TreeWalk w = new TreeWalk(root)) {
      w.atMostEvery(Duration.ofMillis(1));
      w.watchChanges(Duration.ofHours(1));
      walk(w);
      Files.delete(agent);
      assertThat(dueWithin2s(w)).as("a directory removed").isTrue();
      walk(w);
      Files.createDirectories(agent);
      assertThat(dueWithin2s(w)).as("made again").isTrue();
      walk(w);
      Files.writeString(agent.resolve("a.violations.jsonl"), "x\n");
      assertThat(dueWithin2s(w)).as("a file made in it").isTrue();
    }
  }

  @Test
  void withoutTheWatchEverySpacedWalkHappens() throws Exception {
    Files.writeString(root.resolve("a.violations.jsonl"), "x\n");
    try (TreeWalk w = new TreeWalk(root)) {
      w.atMostEvery(Duration.ofMillis(1));
      walk(w);
      assertThat(dueWithin2s(w)).isTrue();
      assertThat(w.unchangedSinceWalk()).isFalse();
    }
  }

  @Test
  void aClosedWatchWalksAsWithout() throws Exception {
    try (TreeWalk w = new TreeWalk(root)) {
      w.atMostEvery(Duration.ofMillis(1));
      w.watchChanges();
      walk(w);
      w.close();
      assertThat(dueWithin2s(w)).isTrue();
    }
  }
}
