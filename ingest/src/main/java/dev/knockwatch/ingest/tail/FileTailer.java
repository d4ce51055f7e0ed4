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
  private final Duration partialFlushAfter;
  public static final Duration DEFAULT_PARTIAL_FLUSH = Duration.ofSeconds(10);
  private final Map<String, FileState> files = new LinkedHashMap<>();
  /**
   * Each file's state by the path the walk finds it at: every poll visits every file, most of them
   * idle, and its relative path and key text cost strings each time (1.5 KB a file a poll).
   */
  private final Map<Path, FileState> byPath = new HashMap<>();
  private final byte[] chunk = new byte[CHUNK];
  private final CharsetDecoder strictUtf8 = StandardCharsets.UTF_8.newDecoder()
      .onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT);

  /**
   * Where one file stands: its identity (device + inode, and a hash of its first bytes, since an
   * inode is reused once a file is deleted), what was read, and what is committed.
   */
  private static final class FileState {
    String rel;
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

    void restart() {
      position = 0;
      committed = 0;
      discarding = false;
      generation++;
    }
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
  private record Checkpoint(String fileKey, long offset, String head, int headLength) {}

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

  /**
   * Returns up to {@code maxLines} new complete lines, across files, each file's in offset order:
   * first at most a fair share of each file's, in path order, then more of the files that had more.
   */
  public List<TailedLine> poll(int maxLines) {
    List<TailedLine> out = new ArrayList<>();
    int share = Math.max(MIN_SHARE, maxLines / FAIR_SHARES);
    List<Map.Entry<Path, BasicFileAttributes>> more = new ArrayList<>();
    for (Map.Entry<Path, BasicFileAttributes> found : discover()) {
      if (out.size() >= maxLines) {
        break;
      }
      int before = out.size();
      read(found.getKey(), found.getValue(), out, Math.min(maxLines, before + share));
      if (out.size() - before >= share) {
        more.add(found);
      }
    }
    for (Map.Entry<Path, BasicFileAttributes> found : more) {
      if (out.size() >= maxLines) {
        break;
      }
      // its attributes again: the first pass may have read past the size the walk saw, which
      // would now look like a truncation
      read(found.getKey(), null, out, maxLines);
    }
    return out;
  }

  /** Reads {@code file}'s new lines into {@code out}, up to {@code maxLines} in all; null attributes: stat it now. */
  private void read(Path file, BasicFileAttributes attrs, List<TailedLine> out, int maxLines) {
    try {
      readNew(file, attrs != null ? attrs : Files.readAttributes(file, BasicFileAttributes.class), out, maxLines);
    } catch (NoSuchFileException e) {
      files.remove(relative(file));
      byPath.remove(file);
    } catch (IOException e) {
      log.warn("cannot read {}: {}", shown(relative(file)), e.getClass().getSimpleName());
    }
  }

  /** Makes the positions of every line returned so far durable. */
  public void commit() {
    commit(mark());
  }

  /** Where every file stands now, for a later {@link #commit(Mark)}. */
  public Mark mark() {
    Mark m = new Mark();
    files.values().forEach(s -> m.positions.put(s, new long[] {s.position, s.generation}));
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
   * (one stat per file and poll: with one file per command there are tens of thousands).
   */
  private List<Map.Entry<Path, BasicFileAttributes>> discover() {
    if (!Files.isDirectory(root)) {
      return List.of();
    }
    java.util.TreeMap<Path, BasicFileAttributes> found = new java.util.TreeMap<>();
    try {
      Files.walkFileTree(root, new java.nio.file.SimpleFileVisitor<>() {
        @Override
        public java.nio.file.FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
          if (attrs.isRegularFile() && matches.test(file)) {
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
    return new ArrayList<>(found.entrySet());
  }

  private void readNew(Path file, BasicFileAttributes attrs, List<TailedLine> out, int maxLines) throws IOException {
    FileState state = byPath.get(file);
    if (state == null || files.get(state.rel) != state) {
      String rel = relative(file);
      state = files.computeIfAbsent(rel, k -> new FileState());
      state.rel = rel;
      byPath.put(file, state);
    }
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
      state.restart();
      state.head = null;
    }
    if (size < state.position) {
      log.warn("{} shrank from {} to {} bytes (truncated): reading it again from its start", shown(rel),
          state.position, size);
      state.restart();
    }
    if (size == state.position) {
      return;
    }
    if (state.head == null || (state.headLength < HEAD_BYTES && size > state.headLength)) {
      state.headLength = (int) Math.min(size, HEAD_BYTES);
      state.head = head(file, state.headLength);
    }
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      ch.position(state.position);
      ByteBuffer buf = ByteBuffer.wrap(chunk);
      ByteArrayOutputStream partial = new ByteArrayOutputStream();
      long base = state.position;     // file position of chunk[0]
      long lineStart = state.position;
      boolean cut = false;
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
          } else if (partial.size() == 0) {
            int len = i - start;
            out.add(line(rel, lineStart, end, chunk, start, Math.min(len, maxLineBytes), len > maxLineBytes));
          } else {
            int room = maxLineBytes - partial.size();
            partial.write(chunk, start, Math.max(0, Math.min(room, i - start)));
            byte[] bytes = partial.toByteArray();
            out.add(line(rel, lineStart, end, bytes, 0, bytes.length, cut || i - start > room));
          }
          partial.reset();
          cut = false;
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
          int room = maxLineBytes - partial.size();
          partial.write(chunk, start, Math.max(0, Math.min(room, n - start)));
          cut |= n - start > room;
        }
        base += n;
        if (idle && !cut && !state.discarding && partial.size() > 0 && base == size) {
          // the writer left a last line without its newline and stopped: return it as it is
          byte[] bytes = partial.toByteArray();
          out.add(line(rel, lineStart, base, bytes, 0, bytes.length, false));
          partial.reset();
          lineStart = base;
          state.position = base;
          full = out.size() >= maxLines;
        }
        // A line that will not end within the bound is returned cut now, so a writer that never
        // sends a newline cannot make the tailer buffer without limit; the rest is discarded.
        if (cut && !state.discarding) {
          byte[] bytes = partial.toByteArray();
          out.add(line(rel, lineStart, base, bytes, 0, bytes.length, true));
          partial.reset();
          cut = false;
          state.discarding = true;
          lineStart = base;
          state.position = base;
          full = out.size() >= maxLines;
        }
      }
    }
  }

  private TailedLine line(String rel, long start, long end, byte[] bytes, int from, int len, boolean cut) {
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
    return new TailedLine(rel, start, end, text, cut, invalid, Bytes.binary(bytes, from, from + len, text.length()));
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

  private void loadCheckpoints() {
    if (checkpointFile == null || !Files.exists(checkpointFile)) {
      return;
    }
    try {
      Map<String, Checkpoint> saved = Json.MAPPER.readValue(checkpointFile.toFile(),
          new TypeReference<Map<String, Checkpoint>>() {});
      saved.forEach((file, cp) -> {
        FileState s = new FileState();
        s.fileKey = cp.fileKey();
        s.head = cp.head();
        s.headLength = cp.headLength();
        s.position = cp.offset();
        s.committed = cp.offset();
        files.put(file, s);
      });
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the ingest checkpoint " + checkpointFile
          + " (delete it to read every file from its start)", e);
    }
  }

  private void saveCheckpoints() {
    if (checkpointFile == null) {
      return;
    }
    Map<String, Checkpoint> snapshot = new HashMap<>();
    files.forEach((file, s) -> snapshot.put(file,
        new Checkpoint(s.fileKey == null ? null : s.fileKey.toString(), s.committed, s.head, s.headLength)));
    try {
      Files.createDirectories(checkpointFile.toAbsolutePath().getParent());
      Path tmp = checkpointFile.resolveSibling(checkpointFile.getFileName() + ".tmp");
      Json.MAPPER.writeValue(tmp.toFile(), snapshot);
      Files.move(tmp, checkpointFile, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the ingest checkpoint " + checkpointFile, e);
    }
  }
}
