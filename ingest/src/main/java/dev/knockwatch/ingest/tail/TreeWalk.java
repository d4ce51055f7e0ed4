package dev.knockwatch.ingest.tail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.TreeMap;
import java.util.function.BiPredicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The walk of the tailed tree: every file a stat, so with one file per command walks are spaced
 * ({@link #atMostEvery}), and a walk takes at most {@link #WALK_SHARE_PERCENT} of the time however
 * many files there are; between walks the tailer looks only at the files that were busy.
 *
 * <p>With {@link #watchChanges} the walk also asks the kernel (inotify, through the JDK's
 * {@link WatchService}) which directories changed: a spaced walk is skipped while no watched
 * directory saw a file created, written or removed, but for one every {@link #QUIET_WALK} in case
 * the kernel missed something (a filesystem without inotify, a full event queue is a change). A
 * directory it cannot watch (the user's inotify limit) ends the watching: every spaced walk
 * happens, as without it.
 */
final class TreeWalk implements AutoCloseable {

  /** With the watch: at least one walk this often, whatever the kernel says. */
  static final Duration QUIET_WALK = Duration.ofSeconds(30);

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

  /** Read and set by the tailer's thread; {@link #wake} closes it from another. */
  private volatile WatchService watch;
  private final Set<Path> watched = new HashSet<>();
  /** A watched directory changed since the last walk (true until the first walk). */
  private boolean changed = true;
  private boolean unchangedSinceWalk;
  /** The longest time between two walks while the kernel says nothing changed. */
  private long quietWalkNanos = QUIET_WALK.toNanos();

  TreeWalk(Path root) {
    this.root = root;
  }

  /** Skips spaced walks while the kernel says no watched directory changed, but for one every {@link #QUIET_WALK}. */
  void watchChanges() {
    watchChanges(QUIET_WALK);
  }

  /** {@link #watchChanges()} with another quiet walk (tests). */
  void watchChanges(Duration quietWalk) {
    this.quietWalkNanos = quietWalk.toNanos();
    if (watch != null) {
      return;
    }
    try {
      watch = root.getFileSystem().newWatchService();
    } catch (IOException | UnsupportedOperationException e) {
      log.info("{}: changes not watched ({}); every spaced walk happens", root, e.toString());
    }
  }

  /**
   * True when the last {@link #due} found no watched directory changed since the last walk: the
   * files that walk saw read are still read, as a walk would have found.
   */
  boolean unchangedSinceWalk() {
    return unchangedSinceWalk;
  }

  /** Walks at most once per {@code interval}; zero (the default): every poll walks. */
  void atMostEvery(Duration interval) {
    this.everyNanos = interval.toNanos();
  }

  /** Whether a poll at {@code now} (nanoTime) walks. */
  boolean due(long now) {
    unchangedSinceWalk = false;
    if (everyNanos == 0 || walkedAtNanos == null) {
      return true;
    }
    if (watch != null) {
      drain();
      if (watch != null && !changed && now - walkedAtNanos < quietWalkNanos) {
        unchangedSinceWalk = true;
        return false;
      }
    }
    return now - walkedAtNanos >= gapNanos;
  }

  /** Takes the kernel's events so far: any event, an overflow or a directory gone is a change. */
  private void drain() {
    try {
      WatchKey key;
      while ((key = watch.poll()) != null) {
        take(key);
      }
    } catch (ClosedWatchServiceException e) {
      watch = null;
    }
  }

  private void take(WatchKey key) {
    if (!key.pollEvents().isEmpty()) {
      changed = true;
    }
    if (!key.reset()) {
      watched.remove((Path) key.watchable());
      changed = true;
    }
  }

  /**
   * Waits until the kernel says a watched directory changed, at most {@code max} and no later than
   * the next quiet walk; false at once when nothing is watched (the caller sleeps instead).
   */
  boolean awaitChange(Duration max) throws InterruptedException {
    WatchService w = watch;
    if (w == null || walkedAtNanos == null) {
      return false;
    }
    long untilQuietWalk = walkedAtNanos + quietWalkNanos - System.nanoTime();
    long wait = Math.max(0, Math.min(max.toNanos(), untilQuietWalk));
    try {
      WatchKey key = w.poll(wait, TimeUnit.NANOSECONDS);
      if (key != null) {
        take(key);
      }
    } catch (ClosedWatchServiceException e) {
      watch = null; // woken by close: the caller sleeps from now on
      return false;
    }
    return true;
  }

  /** Ends a wait in {@link #awaitChange} from another thread, and the watching with it. */
  void wake() {
    WatchService w = watch;
    if (w != null) {
      try {
        w.close();
      } catch (IOException e) {
        log.debug("closing the watch of {}: {}", root, e.toString());
      }
    }
  }

  /** Watches {@code dir}, listed by a walk; a directory that cannot be (the inotify limit) ends the watching. */
  void watch(Path dir) {
    if (watch == null || watched.contains(dir)) {
      return;
    }
    try {
      dir.register(watch, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_MODIFY,
          StandardWatchEventKinds.ENTRY_DELETE);
      watched.add(dir);
    } catch (NoSuchFileException | NotDirectoryException e) {
      // removed (or replaced) since the walk listed it: its parent's watch saw that, nothing to watch
    } catch (IOException | ClosedWatchServiceException e) {
      log.warn("{}: cannot watch {} ({}); every spaced walk happens from now on", root, dir, e.toString());
      close();
    }
  }

  @Override
  public void close() {
    wake();
    watch = null;
    watched.clear();
  }

  /**
   * The files {@code wanted} takes, sorted by path, each with the attributes the walk read (one
   * stat per file and walk); {@code startedAt} is when the poll began, for the gap to the next walk.
   */
  List<Found> walk(long startedAt, BiPredicate<Path, BasicFileAttributes> wanted) {
    changed = false; // what changes from here on, the next drain sees
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
        public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
          watch(dir); // before its entries are listed: a file made after is an event
          return FileVisitResult.CONTINUE;
        }

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
