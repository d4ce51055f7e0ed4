package dev.knockwatch.ingest.tail;

import dev.knockwatch.events.Sanitize;
import dev.knockwatch.ingest.tail.TreeWalk.Found;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tails every matching file under a root directory, by byte position, like Kafka Connect's
 * FileStreamSourceTask: only complete lines are returned (a partial last line waits for its
 * newline), "\r\n" and "\n" both end a line, a file that shrank was truncated and is read again
 * from the start, and a file replaced under the same name (rotation) is read from the start.
 *
 * <p>Positions advance as lines are returned; {@link #commit()} makes them durable in the
 * checkpoint file once the caller has published those lines ({@link #mark()} and
 * {@link #commit(Mark)} when the caller reads on while an earlier batch is being published), and
 * {@link #rewind()} goes back to the last commit when publishing failed. A line read twice after a crash keeps its offset,
 * hence its event id.
 */
public final class FileTailer {

  private static final Logger log = LoggerFactory.getLogger(FileTailer.class);

  private final Path root;
  private final Predicate<Path> matches;
  /** Reads a file's new lines: polls are not concurrent, so one serves every file. */
  private final FileLook look;
  public static final Duration DEFAULT_PARTIAL_FLUSH = Duration.ofSeconds(10);
  /** The files known, by name and by path, and what of them the checkpoint file does not hold yet. */
  private final KnownFiles known;
  /** The files a poll between walks looks at: their last look found new bytes, or left some unread. */
  private final java.util.TreeSet<Path> active = new java.util.TreeSet<>();
  private final TreeWalk walk;
  private boolean lastPollWalked;
  /**
   * Each file's bytes not yet read at the last look, and whether they may have changed since:
   * with {@link #watchChanges}, an idle tree's lag is not a stat of every file a second.
   */
  private Map<String, Long> behind = Map.of();
  private boolean lagStale = true;

  /** The name a rotated file was rotated from, or null when {@code fileName} carries no rotation suffix. */
  public static String rotatedFrom(String fileName) {
    return RotatedNames.rotatedFrom(fileName);
  }

  /**
   * The positions after the lines returned so far, to be committed once those lines are
   * published. The tailer may read on meanwhile; committing a mark commits only up to it.
   */
  public static final class Mark {
    private final Map<FileState, long[]> positions = new HashMap<>();

    private Mark() {}
  }

  static final int HEAD_BYTES = 128;

  /**
   * A poll's lines hold at most about this many bytes (past it, the line that crossed it is the
   * last): lines of a format that reads long ones (an OTLP export's, a whole request a line) would
   * otherwise hold thousands of megabytes in one batch.
   */
  static final long MAX_POLL_BYTES = 32L * 1024 * 1024;

  /**
   * @param root the directory to watch (files at any depth below it)
   * @param matches which files to tail (by path)
   * @param checkpointFile where positions are kept between runs; null keeps them in memory only
   * @param maxLineBytes longer lines are returned cut, flagged {@code truncated}
   */
  public FileTailer(Path root, Predicate<Path> matches, Path checkpointFile, int maxLineBytes) {
    this(root, matches, checkpointFile, rel -> maxLineBytes, DEFAULT_PARTIAL_FLUSH);
  }

  /** @param maxLineBytes each file's bound, by its path relative to the root */
  public FileTailer(Path root, Predicate<Path> matches, Path checkpointFile,
      java.util.function.ToIntFunction<String> maxLineBytes) {
    this(root, matches, checkpointFile, maxLineBytes, DEFAULT_PARTIAL_FLUSH);
  }

  /**
   * @param partialFlushAfter a last line without its newline is returned once the file has not
   *     grown for this long (a writer that died mid-line); until then it waits for its newline
   */
  public FileTailer(Path root, Predicate<Path> matches, Path checkpointFile, int maxLineBytes, Duration partialFlushAfter) {
    this(root, matches, checkpointFile, rel -> maxLineBytes, partialFlushAfter);
  }

  public FileTailer(Path root, Predicate<Path> matches, Path checkpointFile,
      java.util.function.ToIntFunction<String> maxLineBytes, Duration partialFlushAfter) {
    this.look = new FileLook(maxLineBytes, partialFlushAfter);
    this.root = root;
    this.walk = new TreeWalk(root);
    this.matches = matches;
    this.known = new KnownFiles(root, checkpointFile == null ? null : new CheckpointStore(checkpointFile));
    known.load();
  }
  /**
   * Reads files that are finished (parse, replay, rules tests): a last line without its newline
   * is a line at once, not after the writer has been idle for a while; else it would never be read.
   */
  public FileTailer wholeFiles() {
    look.wholeFiles();
    return this;
  }


  /**
   * A file's share of a poll's first pass, as a part of {@code maxLines}: with a backlog in many
   * files, one poll holds lines of each of several of them, so no file waits behind another's
   * backlog (and the agent parses the files side by side); the room left after the first pass
   * goes to the files that had more.
   */
  static final int FAIR_SHARES = 8;
  private static final int MIN_SHARE = 64;

  /** Which files are paced, and to how many lines a second ({@link #pace}). */
  private Pacer pacer = Pacer.NONE;

  /**
   * Reads each file {@code paced} accepts at no more than {@code linesPerSecond} lines a second
   * (a second's worth at once). One command's file that floods faster is read at that pace: its
   * later lines wait in the file (its lag grows, no line is lost) ({@link Pacer}).
   */
  public FileTailer pace(Predicate<Path> paced, int linesPerSecond) {
    this.pacer = new Pacer(paced, linesPerSecond, file -> shown(known.relative(file)));
    return this;
  }

  /**
   * Returns up to {@code maxLines} new complete lines, across files, each file's in offset order:
   * first at most a fair share of each file's, in path order, then more of the files that had more.
   *
   * <p>A poll walks the directory tree (a stat of every file), unless {@link #walkAtMostEvery}
   * says the last walk is recent: then it looks only at the files whose last look found new
   * bytes, or left some unread. A poll that returns nothing without a walk
   * ({@link #lastPollSawEveryFile()} false) does not mean every file is read.
   */
  public List<TailedLine> poll(int maxLines) {
    return poll(maxLines, false);
  }

  /** {@link #poll(int)}, with a walk of every file whatever {@link #walkAtMostEvery} says when {@code everyFile}. */
  public List<TailedLine> poll(int maxLines, boolean everyFile) {
    long now = System.nanoTime();
    boolean walk = everyFile || this.walk.due(now);
    List<Found> look;
    if (walk) {
      look = this.walk.walk(now, this::wanted);
    } else {
      look = new ArrayList<>(active.size());
      for (Path p : active) {
        look.add(new Found(p, null));
      }
    }
    lastPollWalked = walk;
    // the lag stands while the kernel says nothing changed and nothing was read (a walk, a change: anew)
    lagStale |= walk || !this.walk.unchangedSinceWalk();
    List<TailedLine> out = new ArrayList<>();
    int share = Math.max(MIN_SHARE, maxLines / FAIR_SHARES);
    List<Found> more = new ArrayList<>();
    int visited = 0;
    this.look.budget(MAX_POLL_BYTES);
    for (Found found : look) {
      if (out.size() >= maxLines || this.look.spent()) {
        break;
      }
      int before = out.size();
      int allowed = pacer.allowance(found.path(), now);
      if (allowed == 0) {
        active.add(found.path()); // paced: looked at again next poll
        visited++;
        continue;
      }
      read(found.path(), found.attrs(), out, (int) Math.min(maxLines, (long) before + Math.min(share, allowed)));
      pacer.spend(found.path(), allowed, out.size() - before, now);
      if (out.size() - before >= share && allowed > share) {
        more.add(found);
      }
      track(found.path(), out.size() > before);
      visited++;
    }
    for (Found found : more) {
      if (out.size() >= maxLines || this.look.spent()) {
        break;
      }
      int before = out.size();
      int allowed = pacer.allowance(found.path(), now);
      if (allowed == 0) {
        continue;
      }
      // its attributes again: the first pass may have read past the size the walk saw, which
      // would now look like a truncation
      read(found.path(), null, out, (int) Math.min(maxLines, (long) before + allowed));
      pacer.spend(found.path(), allowed, out.size() - before, now);
      track(found.path(), true);
    }
    if (walk) {
      // the files the poll was too full to look at: the walk saw whether they hold unread bytes
      for (Found found : look.subList(visited, look.size())) {
        FileState s = known.byPath.get(found.path());
        if (s == null || found.attrs().size() != s.position) {
          active.add(found.path());
        }
      }
    }
    // A file first seen, rotated or restarted is written down now, at its committed position,
    // before its lines are sent: killed before the first commit, a restart still knows which file
    // it read (and under which name its lines' ids were made) when the file is found renamed.
    known.save();
    lagStale |= !out.isEmpty();
    return out;
  }


  /** Keeps {@code file} among the files looked at between walks while it gives lines or holds unread bytes. */
  private void track(Path file, boolean gaveLines) {
    FileState s = known.byPath.get(file);
    if (s != null && (gaveLines || s.position < s.lastSize)) {
      active.add(file);
    } else {
      active.remove(file);
    }
  }

  /**
   * Walks the directory tree at most once per {@code interval}; the polls in between look only at
   * the files that were busy at their last look, so a writer appending a few lines at a time
   * does not cost a stat of every file per batch. New files, and idle files written again, are
   * seen at the next walk. Walks take at most a bounded share of the time however many files
   * there are ({@link TreeWalk#WALK_SHARE_PERCENT}). Zero (the default): every poll walks.
   */
  public FileTailer walkAtMostEvery(Duration interval) {
    walk.atMostEvery(interval);
    return this;
  }

  /**
   * Between spaced walks, walks only when the kernel says a watched directory changed, and at least
   * every {@link TreeWalk#QUIET_WALK} ({@link TreeWalk}): an idle tree of many files costs no stat
   * of each per poll. Until {@link #close}.
   */
  public FileTailer watchChanges() {
    walk.watchChanges();
    return this;
  }

  /** Stops watching the tree (the tailer walks on as without {@link #watchChanges}). */
  public void close() {
    walk.close();
  }

  /**
   * With nothing left to read (no busy file) and the tree watched: waits until the kernel says
   * something changed, at most {@code max}, and returns true; else false at once (sleep instead).
   */
  public boolean awaitChange(Duration max) throws InterruptedException {
    return active.isEmpty() && walk.awaitChange(max);
  }

  /** Ends an {@link #awaitChange} from another thread (the watching ends with it). */
  public void wake() {
    walk.wake();
  }

  /**
   * Whether the last poll saw the whole tree: it walked it, or the kernel said nothing changed
   * since the last walk. If it also returned nothing, every file is read.
   */
  public boolean lastPollSawEveryFile() {
    return lastPollWalked || walk.unchangedSinceWalk();
  }

  /** Reads {@code file}'s new lines into {@code out}, up to {@code maxLines} in all; null attributes: stat it now. */
  private void read(Path file, BasicFileAttributes attrs, List<TailedLine> out, int maxLines) {
    try {
      readNew(file, attrs != null ? attrs : Files.readAttributes(file, BasicFileAttributes.class), out, maxLines);
    } catch (NoSuchFileException e) {
      String rel = known.relative(file);
      FileState gone = known.files.get(rel);
      Path rotated = gone == null ? null : RotatedNames.rotatedSibling(file, gone.fileKey);
      if (rotated != null) {
        // moved away with nothing in its place yet: its rest is read under its new name
        try {
          known.handOver(gone, file, rotated, false);
          readNew(rotated, Files.readAttributes(rotated, BasicFileAttributes.class), out, maxLines);
        } catch (IOException again) {
          log.warn("cannot read {}: {}", shown(known.relative(rotated)), again.getClass().getSimpleName());
        }
        return;
      }
      known.files.remove(rel);
      if (gone != null) {
        known.unsaved.remove(gone);
        known.removed.add(rel);
      }
      known.byPath.remove(file);
    } catch (IOException e) {
      log.warn("cannot read {}: {}", shown(known.relative(file)), e.getClass().getSimpleName());
    }
  }

  /** Makes the positions of every line returned so far durable. */
  public void commit() {
    Mark all = new Mark();
    known.files.values().forEach(s -> all.positions.put(s, new long[] {s.position, s.generation}));
    commit(all);
  }

  /**
   * Where every file stands now, for a later {@link #commit(Mark)}: the files whose position moved
   * since the last mark (the others' stand in an earlier mark, committed first).
   */
  public Mark mark() {
    Mark m = new Mark();
    known.moved.forEach(s -> m.positions.put(s, new long[] {s.position, s.generation}));
    known.moved.clear();
    return m;
  }

  /**
   * Makes the positions of a mark durable, for the files still read from the same start (a file
   * rotated or truncated since the mark keeps its new position). Marks are committed in order.
   */
  public void commit(Mark mark) {
    mark.positions.forEach((s, at) -> {
      if (s.generation == at[1] && at[0] > s.committed) {
        s.committed = at[0];
        known.unsaved.add(s);
      }
    });
    known.save();
  }

  /** Forgets what was read since the last commit: those lines will be returned again. */
  public void rewind() {
    lagStale = true;
    // what is read again is looked at the next poll, not at the next walk (up to 30 s when watched)
    known.byPath.forEach((path, s) -> {
      if (s.position != s.committed) {
        active.add(path);
      }
    });
    known.files.values().forEach(s -> {
      s.position = s.committed;
      s.discarding = false;
    });
  }

  /** Bytes not yet read, summed over the files seen: how far behind the tailer is (a stat per file). */
  public long lagBytes() {
    return lagBytes(rel -> "all", new HashMap<>());
  }

  /**
   * Bytes not yet read, added into {@code into} under the key {@code group} gives each file
   * (its relative path); returns the total.
   */
  public long lagBytes(java.util.function.Function<String, String> group, Map<String, Long> into) {
    if (lagStale) {
      behind = new HashMap<>();
      for (Map.Entry<String, FileState> e : known.files.entrySet()) {
        try {
          behind.put(e.getKey(), Math.max(0, Files.size(root.resolve(e.getKey())) - e.getValue().position));
        } catch (IOException ignored) {
          // the file went away; nothing left to read from it
        }
      }
      lagStale = false;
    }
    long lag = 0;
    for (Map.Entry<String, Long> e : behind.entrySet()) {
      lag += e.getValue();
      into.merge(group.apply(e.getKey()), e.getValue(), Long::sum);
    }
    return lag;
  }

  /** Whether the lag may differ from the last {@link #lagBytes} (a walk, a change, a line read since). */
  public boolean lagMayHaveChanged() {
    return lagStale;
  }

  /**
   * Whether the walk hands {@code file} to the poll: a file known and read to its end is passed by
   * (with one file per command there are tens of thousands); a new one if the tailer follows it.
   */
  private boolean wanted(Path file, BasicFileAttributes attrs) {
    FileState seen = known.byPath.get(file);
    return seen != null && known.files.get(seen.rel) == seen ? !readToTheEnd(seen, attrs)
        : attrs.isRegularFile() && RotatedNames.follows(file, matches);
  }

  /**
   * The same file as at its last look (same key, size and modification time), read to its end:
   * nothing to read, and nothing a read would find (rotation, truncation, a new head, a partial
   * line to flush), so the walk passes it by.
   */
  private static boolean readToTheEnd(FileState s, BasicFileAttributes attrs) {
    long size = attrs.size();
    return size == s.position && size == s.lastSize && Objects.equals(attrs.fileKey(), s.rawKey)
        && attrs.lastModifiedTime().to(java.util.concurrent.TimeUnit.NANOSECONDS) == s.lastModified;
  }

  private void readNew(Path file, BasicFileAttributes attrs, List<TailedLine> out, int maxLines) throws IOException {
    FileState state = known.byPath.get(file);
    if (state == null || known.files.get(state.rel) != state) {
      String rel = known.relative(file);
      boolean seen = known.files.containsKey(rel);
      state = known.files.computeIfAbsent(rel, k -> new FileState());
      state.rel = rel;
      known.byPath.put(file, state);
      if (!seen) {
        state = known.continuesStream(state, file, attrs);
      }
    }
    Object key = attrs.fileKey();
    if (state.fileKey != null && key != null && !Objects.equals(state.fileKey, key.toString())
        && !key.equals(state.rawKey)) {
      Path rotated = RotatedNames.rotatedSibling(file, state.fileKey);
      if (rotated != null) {
        // mv rotation: the file read so far is now under a rotated name; read its rest there first
        known.handOver(state, file, rotated, true);
        readNew(rotated, Files.readAttributes(rotated, BasicFileAttributes.class), out, maxLines);
        state = known.byPath.get(file);
      }
    }
    long position = state.position;
    int generation = state.generation;
    Object fileKey = state.fileKey;
    String head = state.head;
    try {
      look.read(state, file, attrs, out, maxLines);
    } finally {
      if (state.position != position || state.generation != generation) {
        known.moved.add(state);
      }
      if (state.generation != generation || !Objects.equals(state.fileKey, fileKey) || !Objects.equals(state.head, head)) {
        known.unsaved.add(state); // a new file, another file under the name, a restart from 0: the checkpoint changes
      }
    }
  }

  /** File names are chosen by whoever writes the logs: never put one raw into a log line. */
  static String shown(String rel) {
    return Sanitize.text(rel, 300);
  }
}
