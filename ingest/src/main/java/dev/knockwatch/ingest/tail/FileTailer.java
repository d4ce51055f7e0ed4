package dev.knockwatch.ingest.tail;

import com.fasterxml.jackson.core.type.TypeReference;
import dev.knockwatch.events.Hashes;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Sanitize;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
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
  private static final int CHUNK = 64 * 1024;

  private final Path root;
  private final Predicate<Path> matches;
  private final Path checkpointFile;
  private final int maxLineBytes;
  /** The line being read, across chunks: polls are not concurrent, so one serves every file. */
  private final LineBuffer partial;
  /** The modification time of the file being read. */
  private java.time.Instant modifiedAt;
  private final Duration partialFlushAfter;
  public static final Duration DEFAULT_PARTIAL_FLUSH = Duration.ofSeconds(10);
  private final Map<String, FileState> files = new LinkedHashMap<>();
  /**
   * Each file's state by the path the walk finds it at: every poll visits every file, most of them
   * idle, and its relative path and key text cost strings each time (1.5 KB a file a poll).
   */
  private final Map<Path, FileState> byPath = new HashMap<>();
  private final byte[] chunk = new byte[CHUNK];
  /** The files a poll between walks looks at: their last look found new bytes, or left some unread. */
  private final java.util.TreeSet<Path> active = new java.util.TreeSet<>();
  private long walkEveryNanos;
  /** Between the end of a walk and the next: {@link #walkEveryNanos}, or more when walks take long. */
  private long walkGapNanos;
  /** When the last walk ended; null before the first. */
  private Long walkedAtNanos;
  /**
   * A walk takes at most this share of the time: with very many files, or on a starved CPU, the
   * walks come further apart instead of taking the reader's whole time.
   */
  static final int WALK_SHARE_PERCENT = 10;
  private boolean lastPollWalked;
  /** The files whose checkpoint changed since it was last written, and the files gone since then. */
  private final java.util.Set<FileState> unsaved = new java.util.LinkedHashSet<>();
  private final java.util.Set<String> removed = new java.util.LinkedHashSet<>();
  /** Entries in the journal beside the checkpoint file, which is rewritten whole once there are more than its files. */
  private int journaled;
  /** The files whose position moved since the last {@link #mark()}: the next mark holds only these. */
  private final java.util.Set<FileState> moved = new java.util.HashSet<>();
  private final CharsetDecoder strictUtf8 = StandardCharsets.UTF_8.newDecoder()
      .onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT);

  /**
   * Where one file stands: its identity (device + inode, and a hash of its first bytes, since an
   * inode is reused once a file is deleted), what was read, and what is committed.
   */
  private static final class FileState {
    String rel;
    /**
     * What the lines' ids are made from: the name the file was first read under, kept when it is
     * rotated to another name (its lines keep their ids however often they are read again), and
     * for a file that came after a rotation, that name with its identity
     * ({@link #afterRotation}). Null: {@link #rel}.
     */
    String idName;
    Object fileKey;
    /** The file system's own key object {@link #fileKey} was last read from. */
    Object rawKey;
    String head;
    int headLength;
    long lastSize = -1;
    long lastModified = Long.MIN_VALUE;
    long sizeChangedAtNanos;
    long position;
    long committed;
    boolean discarding;
    /** Counts restarts from offset 0 (rotation, truncation): a mark taken before one is stale. */
    int generation;
    /**
     * When the file was truncated in place (copytruncate): how far it had been read, and its head
     * then, so that its copy under a rotated name is read only past what was read here.
     */
    long truncatedAt;
    String truncatedHead;
    int truncatedHeadLength;
    String truncatedIdName;

    void restart() {
      position = 0;
      committed = 0;
      discarding = false;
      generation++;
      head = null; // the new content's head, read anew: the old one would make its next append look like a new file
      headLength = 0;
    }
  }

  /**
   * A rotation suffix as logrotate writes them ({@code .1}, {@code .12}, {@code -20261130},
   * {@code -2026113012}): the file is the same stream as the name before it. Compressed ones are
   * never read (their bytes are not the lines).
   */
  private static final java.util.regex.Pattern ROTATED =
      java.util.regex.Pattern.compile("(.+?)(?:\\.\\d{1,3}|-\\d{8}(?:\\d{2}){0,3})");
  private static final java.util.regex.Pattern COMPRESSED =
      java.util.regex.Pattern.compile("(?i).*\\.(?:gz|bz2|xz|zst|z|zip|lz4)");

  /** The name a rotated file was rotated from, or null when {@code fileName} carries no rotation suffix. */
  public static String rotatedFrom(String fileName) {
    java.util.regex.Matcher m = ROTATED.matcher(fileName);
    return m.matches() ? m.group(1) : null;
  }

  /** The stream a file belongs to: the name it was rotated from, or its own. */
  private static String stream(String fileName) {
    String base = rotatedFrom(fileName);
    return base != null ? base : fileName;
  }

  /** The tailer reads a file that matches, and a rotated name of one that does; never a compressed one. */
  private boolean follows(Path file) {
    String name = file.getFileName().toString();
    if (COMPRESSED.matcher(name).matches()) {
      return false;
    }
    String base = rotatedFrom(name);
    return matches.test(file) || base != null && matches.test(file.resolveSibling(base));
  }

  /** Where the file of {@code fileKey}, once at {@code file}, is now under another name of its stream; null when nowhere. */
  private static Path rotatedSibling(Path file, Object fileKey) {
    if (fileKey == null || file.getParent() == null) {
      return null;
    }
    String mine = stream(file.getFileName().toString());
    try (java.util.stream.Stream<Path> siblings = Files.list(file.getParent())) {
      for (Path sib : (Iterable<Path>) siblings::iterator) {
        String name = sib.getFileName().toString();
        if (sib.equals(file) || !stream(name).equals(mine) || COMPRESSED.matcher(name).matches()) {
          continue;
        }
        Object key = Files.readAttributes(sib, BasicFileAttributes.class).fileKey();
        if (key != null && key.toString().equals(fileKey.toString())) {
          return sib;
        }
      }
    } catch (IOException e) {
      return null;
    }
    return null;
  }

  /**
   * The positions after the lines returned so far, to be committed once those lines are
   * published. The tailer may read on meanwhile; committing a mark commits only up to it.
   */
  public static final class Mark {
    private final Map<FileState, long[]> positions = new HashMap<>();

    private Mark() {}
  }

  /** A checkpoint entry as stored on disk. */
  private record Checkpoint(String fileKey, long offset, String head, int headLength, String idName) {}

  static final int HEAD_BYTES = 128;

  /**
   * @param root the directory to watch (files at any depth below it)
   * @param matches which files to tail (by path)
   * @param checkpointFile where positions are kept between runs; null keeps them in memory only
   * @param maxLineBytes longer lines are returned cut, flagged {@code truncated}
   */
  public FileTailer(Path root, Predicate<Path> matches, Path checkpointFile, int maxLineBytes) {
    this(root, matches, checkpointFile, maxLineBytes, DEFAULT_PARTIAL_FLUSH);
  }

  /**
   * @param partialFlushAfter a last line without its newline is returned once the file has not
   *     grown for this long (a writer that died mid-line); until then it waits for its newline
   */
  public FileTailer(Path root, Predicate<Path> matches, Path checkpointFile, int maxLineBytes, Duration partialFlushAfter) {
    this.partialFlushAfter = partialFlushAfter;
    this.root = root;
    this.matches = matches;
    this.checkpointFile = checkpointFile;
    this.maxLineBytes = maxLineBytes;
    this.partial = new LineBuffer(maxLineBytes);
    loadCheckpoints();
  }

  /**
   * A file's share of a poll's first pass, as a part of {@code maxLines}: with a backlog in many
   * files, one poll holds lines of each of several of them, so no file waits behind another's
   * backlog (and the agent parses the files side by side); the room left after the first pass
   * goes to the files that had more.
   */
  static final int FAIR_SHARES = 8;
  private static final int MIN_SHARE = 64;

  /** Which files are paced, and to how many lines a second ({@link #pace}); 0: none. */
  private Predicate<Path> paced = p -> false;
  private double pacedPerSecond;
  /** The paced files read lately, with what each may still read; a file whose bucket is full has none. */
  private final Map<Path, Bucket> buckets = new HashMap<>();

  /** A token bucket: a second's worth of lines at most, refilled at the pace. */
  private static final class Bucket {
    double tokens;
    long atNanos;
    /** Whether this flood of the file was logged: once a flood, until its bucket fills again. */
    boolean said;
  }

  /**
   * Reads each file {@code paced} accepts at no more than {@code linesPerSecond} lines a second
   * (a second's worth at once). One command's file that floods faster is read at that pace: its
   * later lines wait in the file (its lag grows, no line is lost), and the pipeline behind stays
   * free for everyone else's refusals (issue 24: no command starves another).
   */
  public FileTailer pace(Predicate<Path> paced, int linesPerSecond) {
    this.paced = paced;
    this.pacedPerSecond = linesPerSecond;
    return this;
  }

  /** How many lines {@code file} may give now: no bound for a file that is not paced. */
  private int allowance(Path file, long now) {
    if (pacedPerSecond <= 0 || !paced.test(file)) {
      return Integer.MAX_VALUE;
    }
    Bucket b = buckets.get(file);
    if (b == null) {
      return (int) pacedPerSecond;
    }
    b.tokens = Math.min(pacedPerSecond, b.tokens + (now - b.atNanos) / 1e9 * pacedPerSecond);
    b.atNanos = now;
    if (b.tokens >= pacedPerSecond) {
      buckets.remove(file); // full: as good as none, and the map holds only the files lately busy
      return (int) pacedPerSecond;
    }
    if (b.tokens < 1 && !b.said) {
      b.said = true;
      log.info("{}: more than {} lines a second: read at that pace, so that one command cannot crowd out the others "
          + "(its later lines wait in the file; none is lost)", shown(relative(file)), (int) pacedPerSecond);
    }
    return (int) b.tokens;
  }

  /** Takes {@code lines} out of a paced file's bucket; {@code allowed} is what {@link #allowance} gave. */
  private void spend(Path file, int allowed, int lines, long now) {
    if (lines == 0 || allowed == Integer.MAX_VALUE) {
      return;
    }
    Bucket b = buckets.computeIfAbsent(file, f -> {
      Bucket fresh = new Bucket();
      fresh.tokens = pacedPerSecond;
      fresh.atNanos = now;
      return fresh;
    });
    b.tokens -= lines;
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
    boolean walk = everyFile || walkEveryNanos == 0 || walkedAtNanos == null || now - walkedAtNanos >= walkGapNanos;
    List<Found> look;
    if (walk) {
      look = discover();
      walkedAtNanos = System.nanoTime();
      long took = walkedAtNanos - now;
      walkGapNanos = Math.max(walkEveryNanos, took * (100 - WALK_SHARE_PERCENT) / WALK_SHARE_PERCENT);
    } else {
      look = new ArrayList<>(active.size());
      for (Path p : active) {
        look.add(new Found(p, null));
      }
    }
    lastPollWalked = walk;
    List<TailedLine> out = new ArrayList<>();
    int share = Math.max(MIN_SHARE, maxLines / FAIR_SHARES);
    List<Found> more = new ArrayList<>();
    int visited = 0;
    for (Found found : look) {
      if (out.size() >= maxLines) {
        break;
      }
      int before = out.size();
      int allowed = allowance(found.path(), now);
      if (allowed == 0) {
        active.add(found.path()); // paced: looked at again next poll
        visited++;
        continue;
      }
      read(found.path(), found.attrs(), out, (int) Math.min(maxLines, (long) before + Math.min(share, allowed)));
      spend(found.path(), allowed, out.size() - before, now);
      if (out.size() - before >= share && allowed > share) {
        more.add(found);
      }
      track(found.path(), out.size() > before);
      visited++;
    }
    for (Found found : more) {
      if (out.size() >= maxLines) {
        break;
      }
      int before = out.size();
      int allowed = allowance(found.path(), now);
      if (allowed == 0) {
        continue;
      }
      // its attributes again: the first pass may have read past the size the walk saw, which
      // would now look like a truncation
      read(found.path(), null, out, (int) Math.min(maxLines, (long) before + allowed));
      spend(found.path(), allowed, out.size() - before, now);
      track(found.path(), true);
    }
    if (walk) {
      // the files the poll was too full to look at: the walk saw whether they hold unread bytes
      for (Found found : look.subList(visited, look.size())) {
        FileState s = byPath.get(found.path());
        if (s == null || found.attrs().size() != s.position) {
          active.add(found.path());
        }
      }
    }
    // A file first seen, rotated or restarted is written down now, at its committed position,
    // before its lines are sent: killed before the first commit, a restart still knows which file
    // it read (and under which name its lines' ids were made) when the file is found renamed.
    saveCheckpoints();
    return out;
  }

  /** A file found by the walk, with the attributes it read; null attributes: stat it when read. */
  private record Found(Path path, BasicFileAttributes attrs) {}

  /** Keeps {@code file} among the files looked at between walks while it gives lines or holds unread bytes. */
  private void track(Path file, boolean gaveLines) {
    FileState s = byPath.get(file);
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
   * seen at the next walk. The gap after a walk is also at least nine times as long as the walk
   * took ({@link #WALK_SHARE_PERCENT}), so walks take at most a tenth of the time however many
   * files there are. Zero (the default): every poll walks.
   */
  public FileTailer walkAtMostEvery(Duration interval) {
    this.walkEveryNanos = interval.toNanos();
    return this;
  }

  /** Whether the last poll walked the whole tree: if it also returned nothing, every file is read. */
  public boolean lastPollSawEveryFile() {
    return lastPollWalked;
  }

  /** Reads {@code file}'s new lines into {@code out}, up to {@code maxLines} in all; null attributes: stat it now. */
  private void read(Path file, BasicFileAttributes attrs, List<TailedLine> out, int maxLines) {
    try {
      readNew(file, attrs != null ? attrs : Files.readAttributes(file, BasicFileAttributes.class), out, maxLines);
    } catch (NoSuchFileException e) {
      String rel = relative(file);
      FileState gone = files.get(rel);
      Path rotated = gone == null ? null : rotatedSibling(file, gone.fileKey);
      if (rotated != null) {
        // moved away with nothing in its place yet: its rest is read under its new name
        try {
          handOver(gone, file, rotated, false, out, maxLines);
        } catch (IOException again) {
          log.warn("cannot read {}: {}", shown(relative(rotated)), again.getClass().getSimpleName());
        }
        return;
      }
      files.remove(rel);
      if (gone != null) {
        unsaved.remove(gone);
        removed.add(rel);
      }
      byPath.remove(file);
    } catch (IOException e) {
      log.warn("cannot read {}: {}", shown(relative(file)), e.getClass().getSimpleName());
    }
  }

  /** Makes the positions of every line returned so far durable. */
  public void commit() {
    Mark all = new Mark();
    files.values().forEach(s -> all.positions.put(s, new long[] {s.position, s.generation}));
    commit(all);
  }

  /**
   * Where every file stands now, for a later {@link #commit(Mark)}: the files whose position moved
   * since the last mark (the others' stand in an earlier mark, committed first).
   */
  public Mark mark() {
    Mark m = new Mark();
    moved.forEach(s -> m.positions.put(s, new long[] {s.position, s.generation}));
    moved.clear();
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
        unsaved.add(s);
      }
    });
    saveCheckpoints();
  }

  /** Forgets what was read since the last commit: those lines will be returned again. */
  public void rewind() {
    files.values().forEach(s -> {
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
    long lag = 0;
    for (Map.Entry<String, FileState> e : files.entrySet()) {
      try {
        long behind = Math.max(0, Files.size(root.resolve(e.getKey())) - e.getValue().position);
        lag += behind;
        into.merge(group.apply(e.getKey()), behind, Long::sum);
      } catch (IOException ignored) {
        // the file went away; nothing left to read from it
      }
    }
    return lag;
  }

  /**
   * The files to read, sorted by path, each with the attributes the directory walk already read
   * (one stat per file and walk: with one file per command there are tens of thousands), but for
   * the files known and read to their end.
   */
  private List<Found> discover() {
    if (!Files.isDirectory(root)) {
      return List.of();
    }
    java.util.TreeMap<Path, BasicFileAttributes> found = new java.util.TreeMap<>();
    try {
      Files.walkFileTree(root, new java.nio.file.SimpleFileVisitor<>() {
        @Override
        public java.nio.file.FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
          FileState known = byPath.get(file);
          if (known != null && files.get(known.rel) == known ? !readToTheEnd(known, attrs)
              : attrs.isRegularFile() && follows(file)) {
            found.put(file, attrs);
          }
          return java.nio.file.FileVisitResult.CONTINUE;
        }

        @Override
        public java.nio.file.FileVisitResult visitFileFailed(Path file, IOException e) {
          return java.nio.file.FileVisitResult.CONTINUE; // gone between listing and reading
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
    FileState state = byPath.get(file);
    if (state == null || files.get(state.rel) != state) {
      String rel = relative(file);
      boolean known = files.containsKey(rel);
      state = files.computeIfAbsent(rel, k -> new FileState());
      state.rel = rel;
      byPath.put(file, state);
      if (!known) {
        state = continuesStream(state, file, attrs);
      }
    }
    Object key = attrs.fileKey();
    if (state.fileKey != null && key != null && !Objects.equals(state.fileKey, key.toString())
        && !key.equals(state.rawKey)) {
      Path rotated = rotatedSibling(file, state.fileKey);
      if (rotated != null) {
        // mv rotation: the file read so far is now under a rotated name; read its rest there first
        handOver(state, file, rotated, true, out, maxLines);
        state = byPath.get(file);
      }
    }
    long position = state.position;
    int generation = state.generation;
    Object fileKey = state.fileKey;
    String head = state.head;
    try {
      readNew(state, file, attrs, out, maxLines);
    } finally {
      if (state.position != position || state.generation != generation) {
        moved.add(state);
      }
      if (state.generation != generation || !Objects.equals(state.fileKey, fileKey) || !Objects.equals(state.head, head)) {
        unsaved.add(state); // a new file, another file under the name, a restart from 0: the checkpoint changes
      }
    }
  }

  /**
   * {@code state}, the stream read at {@code file}, continues at {@code rotated}, where its file
   * now is: its rest is read there now, and {@code file} starts anew as the next file of the stream.
   */
  private void handOver(FileState state, Path file, Path rotated, boolean replaced, List<TailedLine> out, int maxLines)
      throws IOException {
    String rel = state.rel;
    String rotatedRel = relative(rotated);
    log.info("{} was rotated to {}: reading the rest of it there{}", shown(rel), shown(rotatedRel),
        replaced ? ", and the new " + shown(rel) + " from its start" : "");
    if (state.idName == null) {
      state.idName = rel; // its lines keep the ids they had
    }
    FileState previous = files.remove(rotatedRel);
    if (previous != null) {
      unsaved.remove(previous);
    }
    state.rel = rotatedRel;
    files.put(rotatedRel, state);
    byPath.put(rotated, state);
    unsaved.add(state);
    if (replaced) {
      FileState next = new FileState();
      next.rel = rel;
      next.idName = afterRotation(rel, Files.readAttributes(file, BasicFileAttributes.class).fileKey(), state.head);
      files.put(rel, next);
      byPath.put(file, next);
      unsaved.add(next);
    } else {
      byPath.remove(file);
      removed.add(rel);
    }
    readNew(rotated, Files.readAttributes(rotated, BasicFileAttributes.class), out, maxLines);
  }

  /** Before {@code state} restarts in place: what its copy needs, and a new id name for what follows. */
  private static void rememberTruncation(FileState state) {
    state.truncatedAt = state.position;
    state.truncatedHead = state.head;
    state.truncatedHeadLength = state.headLength;
    state.truncatedIdName = state.idName != null ? state.idName : state.rel;
    state.idName = afterRotation(state.rel, state.fileKey, state.head);
  }

  /**
   * A rotated name first seen may continue its stream: the file read so far under the stream's
   * name, moved here (the same file key), goes on from where it was; a copy of that file made
   * before it was truncated in place (copytruncate: the head it had then) is read only past what
   * was read there. The state to read {@code file} with.
   */
  private FileState continuesStream(FileState state, Path file, BasicFileAttributes attrs) throws IOException {
    String base = rotatedFrom(file.getFileName().toString());
    Path basePath = base == null ? null : file.resolveSibling(base);
    FileState from = basePath == null ? null : files.get(relative(basePath));
    if (from == null || from == state) {
      return state;
    }
    Object key = attrs.fileKey();
    if (key != null && key.toString().equals(from.fileKey) && !Files.exists(basePath)) {
      log.info("{} was rotated to {}: reading the rest of it there", shown(from.rel), shown(state.rel));
      String rel = state.rel;
      files.remove(from.rel);
      removed.add(from.rel);
      byPath.remove(basePath);
      if (from.idName == null) {
        from.idName = from.rel; // its lines keep the ids they had
      }
      from.rel = rel;
      files.put(rel, from);
      byPath.put(file, from);
      unsaved.add(from);
      return from;
    }
    if (from.truncatedHead == null || attrs.size() < from.truncatedAt
        || !from.truncatedHead.equals(head(file, from.truncatedHeadLength))) {
      return state;
    }
    log.info("{} is the copy of {} made before it was truncated: reading it past the {} bytes read there",
        shown(state.rel), shown(from.rel), from.truncatedAt);
    state.position = from.truncatedAt;
    state.committed = from.truncatedAt;
    state.head = from.truncatedHead;
    state.headLength = from.truncatedHeadLength;
    state.idName = from.truncatedIdName; // the copy's lines past the cut were the truncated file's, at the same offsets
    from.truncatedHead = null;
    unsaved.add(state);
    return state;
  }

  private void readNew(FileState state, Path file, BasicFileAttributes attrs, List<TailedLine> out, int maxLines)
      throws IOException {
    String rel = state.rel;
    Object raw = attrs.fileKey();
    Object key = raw == null ? null : raw.equals(state.rawKey) ? state.fileKey : raw.toString();
    state.rawKey = raw;
    if (state.fileKey != null && key != null && !Objects.equals(state.fileKey, key)) {
      log.info("{} was replaced (rotated): reading the new file from its start", shown(rel));
      state.restart();
    }
    state.fileKey = key;
    long size = attrs.size();
    long now = System.nanoTime();
    boolean unchanged = size == state.lastSize;
    if (!unchanged) {
      state.lastSize = size;
      state.sizeChangedAtNanos = now;
    }
    // idle: the file had this size at an earlier poll too, and for long enough
    boolean idle = unchanged && now - state.sizeChangedAtNanos >= partialFlushAfter.toNanos();
    // Same size and same modification time as at the last poll: the bytes are the ones read
    // before, so the head is not read again (with one file per command, most files are idle,
    // and hashing each one's head on every poll cost more than reading the busy ones).
    long modified = attrs.lastModifiedTime().to(java.util.concurrent.TimeUnit.NANOSECONDS);
    boolean touched = !unchanged || modified != state.lastModified;
    state.lastModified = modified;
    if (touched && state.head != null && state.position > 0 && size >= state.headLength
        && !state.head.equals(head(file, state.headLength))) {
      log.info("{} starts with other bytes than before (a new file on a reused inode, or rewritten): reading it from its start",
          shown(rel));
      rememberTruncation(state); // a copytruncate that grew past its old size before this look
      state.restart();
    }
    if (size < state.position) {
      log.warn("{} shrank from {} to {} bytes (truncated): reading it again from its start", shown(rel),
          state.position, size);
      rememberTruncation(state);
      state.restart();
    }
    if (size == state.position) {
      return;
    }
    if (state.head == null || (state.headLength < HEAD_BYTES && size > state.headLength)) {
      state.headLength = (int) Math.min(size, HEAD_BYTES);
      state.head = head(file, state.headLength);
    }
    modifiedAt = attrs.lastModifiedTime().toInstant();
    readingIdName = state.idName;
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      ch.position(state.position);
      ByteBuffer buf = ByteBuffer.wrap(chunk);
      LineBuffer partial = this.partial;
      partial.reset();
      long base = state.position;     // file position of chunk[0]
      long lineStart = state.position;
      boolean full = false;
      while (!full) {
        buf.clear();
        int n = ch.read(buf);
        if (n <= 0) {
          break;
        }
        int start = 0;
        for (int i = Bytes.nextNewline(chunk, 0, n); i < n; i = Bytes.nextNewline(chunk, i + 1, n)) {
          long end = base + i + 1;
          if (state.discarding) {
            state.discarding = false;
          } else if (partial.isEmpty() && i - start <= maxLineBytes) {
            out.add(line(rel, lineStart, end, chunk, start, i - start, false)); // a whole line within the chunk
          } else {
            partial.add(chunk, start, i - start);
            byte[] bytes = partial.bytes();
            out.add(line(rel, lineStart, end, bytes, 0, bytes.length, partial.cut()));
          }
          partial.reset();
          lineStart = end;
          state.position = end;
          start = i + 1;
          if (out.size() >= maxLines) {
            full = true;
            break;
          }
        }
        if (full) {
          break;
        }
        if (!state.discarding && start < n) {
          partial.add(chunk, start, n - start);
        }
        base += n;
        if (idle && !partial.cut() && !state.discarding && !partial.isEmpty() && base == size) {
          // the writer left a last line without its newline and stopped: return it as it is
          byte[] bytes = partial.bytes();
          out.add(line(rel, lineStart, base, bytes, 0, bytes.length, false));
          partial.reset();
          lineStart = base;
          state.position = base;
          full = out.size() >= maxLines;
        }
      }
      // A line past the bound that has not ended where the file ends now is returned cut (its start
      // and its end so far), and its rest is skipped: a writer that never sends a newline cannot make
      // the tailer hold or read it again without limit.
      if (partial.cut() && !state.discarding && !full) {
        byte[] bytes = partial.bytes();
        out.add(line(rel, lineStart, base, bytes, 0, bytes.length, true));
        partial.reset();
        state.discarding = true;
        state.position = base;
      }
    }
  }

  private TailedLine line(String rel, long start, long end, byte[] bytes, int from, int len, boolean cut) {
    return line(rel, start, end, bytes, from, len, cut, modifiedAt);
  }

  /** The id name of the file being read (set by the read that starts it). */
  private String readingIdName;

  private TailedLine line(String rel, long start, long end, byte[] bytes, int from, int len, boolean cut,
      java.time.Instant modified) {
    if (len > 0 && bytes[from + len - 1] == '\r') {
      len--;
    }
    // The JDK's String decoder is the fast path; only a line that came out with U+FFFD is checked
    // strictly, to tell invalid bytes from a U+FFFD the writer really wrote.
    String text = new String(bytes, from, len, StandardCharsets.UTF_8);
    boolean invalid = false;
    if (text.indexOf('\uFFFD') >= 0) {
      try {
        strictUtf8.decode(ByteBuffer.wrap(bytes, from, len));
      } catch (CharacterCodingException e) {
        invalid = true;
      }
    }
    return new TailedLine(rel, start, end, text, cut, invalid, Bytes.binary(bytes, from, from + len, text.length()), modified,
        readingIdName != null ? readingIdName : rel);
  }

  private String relative(Path file) {
    return root.relativize(file).toString().replace('\\', '/');
  }

  /** A hash of the first {@code length} bytes of the file: part of its identity. */
  private static String head(Path file, int length) throws IOException {
    byte[] b = new byte[length];
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      ByteBuffer buf = ByteBuffer.wrap(b);
      while (buf.hasRemaining() && ch.read(buf) > 0) {
        // fill
      }
    }
    return Hashes.sha256Hex(b, 8);
  }

  /** File names are chosen by whoever writes the logs: never put one raw into a log line. */
  private static String shown(String rel) {
    return Sanitize.text(rel, 300);
  }

  /** A change to the checkpoint file, appended to its journal: a file's new checkpoint, or null when it is gone. */
  private record JournalEntry(String file, Checkpoint at) {}

  /** A commit rewrites the checkpoint file whole only after this many journal entries, or as many as files. */
  static final int MIN_JOURNAL_ENTRIES = 1_000;

  private Path journalFile() {
    return checkpointFile.resolveSibling(checkpointFile.getFileName() + ".journal");
  }

  private void loadCheckpoints() {
    if (checkpointFile == null) {
      return;
    }
    if (Files.exists(checkpointFile)) {
      try {
        Map<String, Checkpoint> saved = Json.MAPPER.readValue(checkpointFile.toFile(),
            new TypeReference<Map<String, Checkpoint>>() {});
        saved.forEach(this::restore);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read the ingest checkpoint " + checkpointFile
            + " (delete it to read every file from its start)", e);
      }
    }
    Path journal = journalFile();
    if (!Files.exists(journal)) {
      return;
    }
    List<String> lines;
    try {
      lines = Files.readAllLines(journal, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw badJournal(journal, "", e);
    }
    for (int i = 0; i < lines.size(); i++) {
      JournalEntry e;
      try {
        e = Json.MAPPER.readValue(lines.get(i), JournalEntry.class);
      } catch (IOException bad) {
        if (i == lines.size() - 1) { // the last write did not finish (a crash mid-write): that commit did not happen
          log.warn("the ingest checkpoint journal {} ends in an unfinished entry: ignored", journal);
          break;
        }
        throw badJournal(journal, ", line " + (i + 1), bad);
      }
      if (e.file() == null) {
        throw badJournal(journal, ", line " + (i + 1), new IOException("the entry names no file"));
      }
      if (e.at() == null) {
        files.remove(e.file());
      } else {
        restore(e.file(), e.at());
      }
      journaled++;
    }
  }

  private UncheckedIOException badJournal(Path journal, String where, IOException cause) {
    return new UncheckedIOException("cannot read the ingest checkpoint journal " + journal + where
        + " (delete it and " + checkpointFile.getFileName() + " to read every file from its start)", cause);
  }

  private void restore(String file, Checkpoint cp) {
    FileState s = new FileState();
    s.fileKey = cp.fileKey();
    s.head = cp.head();
    s.headLength = cp.headLength();
    s.position = cp.offset();
    s.committed = cp.offset();
    s.idName = cp.idName();
    files.put(file, s);
  }

  /**
   * Writes what changed since the last write: appended to the journal, one line per file, so a
   * commit costs the files it moved, not every file known; once the journal holds more entries
   * than there are files (and {@link #MIN_JOURNAL_ENTRIES}), the checkpoint file is rewritten
   * whole (atomically) and the journal deleted. A crash between the two leaves the journal's
   * older entries to be applied again at start: positions go back, lines are sent again with
   * their ids, and none is lost.
   */
  private void saveCheckpoints() {
    if (checkpointFile == null || (unsaved.isEmpty() && removed.isEmpty())) {
      return;
    }
    try {
      Files.createDirectories(checkpointFile.toAbsolutePath().getParent());
      int changes = unsaved.size() + removed.size();
      if (journaled + changes > Math.max(MIN_JOURNAL_ENTRIES, files.size())) {
        Map<String, Checkpoint> snapshot = new HashMap<>();
        files.forEach((file, s) -> snapshot.put(file, checkpoint(s)));
        Path tmp = checkpointFile.resolveSibling(checkpointFile.getFileName() + ".tmp");
        Json.MAPPER.writeValue(tmp.toFile(), snapshot);
        Files.move(tmp, checkpointFile, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        Files.deleteIfExists(journalFile());
        journaled = 0;
      } else {
        ByteArrayOutputStream lines = new ByteArrayOutputStream();
        for (String file : removed) {
          Json.MAPPER.writeValue(lines, new JournalEntry(file, null));
          lines.write('\n');
        }
        for (FileState s : unsaved) {
          Json.MAPPER.writeValue(lines, new JournalEntry(s.rel, checkpoint(s)));
          lines.write('\n');
        }
        Files.write(journalFile(), lines.toByteArray(), StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        journaled += changes;
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the ingest checkpoint " + checkpointFile, e);
    }
    unsaved.clear();
    removed.clear();
  }

  private static Checkpoint checkpoint(FileState s) {
    return new Checkpoint(s.fileKey == null ? null : s.fileKey.toString(), s.committed, s.head, s.headLength, s.idName);
  }

  /**
   * The id name of a file that came after a rotation at {@code rel}: the name with the file's key
   * and the head its predecessor had, so it is the same however often the rotation is found again
   * (a crash before the checkpoint recorded it), and never that of an earlier file of the name.
   */
  private static String afterRotation(String rel, Object fileKey, String previousHead) {
    return rel + "@" + fileKey + "~" + previousHead;
  }
}
