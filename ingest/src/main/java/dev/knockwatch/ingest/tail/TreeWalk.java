package dev.knockwatch.ingest.tail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.function.BiPredicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The walk of the tailed tree: every file a stat, so with one file per command walks are spaced
 * ({@link #atMostEvery}), and a walk takes at most {@link #WALK_SHARE_PERCENT} of the time however
 * many files there are; between walks the tailer looks only at the files that were busy.
 */
final class TreeWalk {

  private static final Logger log = LoggerFactory.getLogger(TreeWalk.class);

  /** A walk takes at most this share of the time: with very many files, or on a starved CPU, walks come further apart. */
  static final int WALK_SHARE_PERCENT = 10;

  /** A file found by the walk, with the attributes it read; null attributes: stat it when read. */
  record Found(Path path, BasicFileAttributes attrs) {}

  private final Path root;
  private long everyNanos;
  /** Between the end of a walk and the next: {@link #everyNanos}, or more when walks take long. */
  private long gapNanos;
  /** When the last walk ended; null before the first. */
  private Long walkedAtNanos;

  TreeWalk(Path root) {
    this.root = root;
  }

  /** Walks at most once per {@code interval}; zero (the default): every poll walks. */
  void atMostEvery(Duration interval) {
    this.everyNanos = interval.toNanos();
  }

  /** Whether a poll at {@code now} (nanoTime) walks. */
  boolean due(long now) {
    return everyNanos == 0 || walkedAtNanos == null || now - walkedAtNanos >= gapNanos;
  }

  /**
   * The files {@code wanted} takes, sorted by path, each with the attributes the walk read (one
   * stat per file and walk); {@code startedAt} is when the poll began, for the gap to the next walk.
   */
  List<Found> walk(long startedAt, BiPredicate<Path, BasicFileAttributes> wanted) {
    List<Found> out = list(wanted);
    walkedAtNanos = System.nanoTime();
    long took = walkedAtNanos - startedAt;
    gapNanos = Math.max(everyNanos, took * (100 - WALK_SHARE_PERCENT) / WALK_SHARE_PERCENT);
    return out;
  }

  private List<Found> list(BiPredicate<Path, BasicFileAttributes> wanted) {
    if (!Files.isDirectory(root)) {
      return List.of();
    }
    TreeMap<Path, BasicFileAttributes> found = new TreeMap<>();
    try {
      Files.walkFileTree(root, new SimpleFileVisitor<>() {
        @Override
        public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
          if (wanted.test(file, attrs)) {
            found.put(file, attrs);
          }
          return FileVisitResult.CONTINUE;
        }

        @Override
        public FileVisitResult visitFileFailed(Path file, IOException e) {
          return FileVisitResult.CONTINUE; // gone between listing and reading
        }
      });
    } catch (IOException | UncheckedIOException e) {
      log.warn("cannot list {}: {}", root, e.getMessage());
      return List.of();
    }
    List<Found> out = new ArrayList<>(found.size());
    found.forEach((path, attrs) -> out.add(new Found(path, attrs)));
    return out;
  }
}
