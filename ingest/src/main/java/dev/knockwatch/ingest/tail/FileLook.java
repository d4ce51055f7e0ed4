package dev.knockwatch.ingest.tail;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One look at one file: whether the bytes under its name are still the ones read so far (its file
 * key, the hash of its head, its size), then its new complete lines, cut by {@link LineSplitter}
 * in chunks of {@value #CHUNK} bytes. A last line without its newline waits until the file has
 * not grown for {@code partialFlushAfter} (a writer that died mid-line), or is read at once when
 * the files are finished ({@link #wholeFiles}).
 */
final class FileLook {

  private static final Logger log = LoggerFactory.getLogger(FileTailer.class);
  private static final int CHUNK = 64 * 1024;

  /** A file's bound on a line, by its path relative to the root (a format's: an OTLP export's lines are long). */
  private final java.util.function.ToIntFunction<String> maxLineBytes;
  /** One splitter per bound, made when a file of it is first read. */
  private final java.util.Map<Integer, LineSplitter> splitters = new java.util.HashMap<>();
  private final byte[] chunk = new byte[CHUNK];
  private final Duration partialFlushAfter;
  /** The files are finished (parse, replay): a last line without its newline is read at once. */
  private boolean wholeFiles;
  /** The modification time of the file being read. */
  private Instant modifiedAt;
  /** The id name of the file being read (set by the read that starts it). */
  private String readingIdName;

  FileLook(java.util.function.ToIntFunction<String> maxLineBytes, Duration partialFlushAfter) {
    this.maxLineBytes = maxLineBytes;
    this.partialFlushAfter = partialFlushAfter;
  }

  void wholeFiles() {
    this.wholeFiles = true;
  }

  /** The bytes of lines the reads of a poll may still give. */
  private long bytesLeft = Long.MAX_VALUE;

  /** The poll's budget of lines' bytes, from now. */
  void budget(long bytes) {
    bytesLeft = bytes;
  }

  /** Whether the poll has given lines of its budget's bytes. */
  boolean spent() {
    return bytesLeft <= 0;
  }

  /**
   * Reads {@code file}'s new lines into {@code out}, up to {@code maxLines} in all, from where
   * {@code state} stands; first, another file under the name (a new file key), a file that starts
   * with other bytes than before, or one that shrank is read again from its start.
   */
  void read(FileState state, Path file, BasicFileAttributes attrs, List<TailedLine> out, int maxLines)
      throws IOException {
    String rel = state.rel;
    Object raw = attrs.fileKey();
    Object key = raw == null ? null : raw.equals(state.rawKey) ? state.fileKey : raw.toString();
    state.rawKey = raw;
    if (state.fileKey != null && key != null && !Objects.equals(state.fileKey, key)) {
      log.info("{} was replaced (rotated): reading the new file from its start", FileTailer.shown(rel));
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
    boolean idle = wholeFiles || unchanged && now - state.sizeChangedAtNanos >= partialFlushAfter.toNanos();
    // Same size and same modification time as at the last poll: the bytes are the ones read
    // before, so the head is not read again (with one file per command, most files are idle,
    // and hashing each one's head on every poll cost more than reading the busy ones).
    long modified = attrs.lastModifiedTime().to(java.util.concurrent.TimeUnit.NANOSECONDS);
    boolean touched = !unchanged || modified != state.lastModified;
    state.lastModified = modified;
    if (touched && state.head != null && state.position > 0 && size >= state.headLength
        && !state.head.equals(FileState.headOf(file, state.headLength))) {
      log.info("{} starts with other bytes than before (a new file on a reused inode, or rewritten): reading it from its start",
          FileTailer.shown(rel));
      state.truncated(); // a copytruncate that grew past its old size before this look
      state.restart();
    }
    if (size < state.position) {
      log.warn("{} shrank from {} to {} bytes (truncated): reading it again from its start", FileTailer.shown(rel),
          state.position, size);
      state.truncated();
      state.restart();
    }
    if (size == state.position) {
      return;
    }
    if (state.head == null || (state.headLength < FileTailer.HEAD_BYTES && size > state.headLength)) {
      state.headLength = (int) Math.min(size, FileTailer.HEAD_BYTES);
      state.head = FileState.headOf(file, state.headLength);
    }
    modifiedAt = attrs.lastModifiedTime().toInstant();
    readingIdName = state.idName;
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      ch.position(state.position);
      ByteBuffer buf = ByteBuffer.wrap(chunk);
      LineSplitter split = splitters.computeIfAbsent(maxLineBytes.applyAsInt(rel), LineSplitter::new);
      split.start(state.position, state.discarding);
      LineSplitter.Lines lines = (start, end, bytes, from, length, cut) -> {
        out.add(TailedLine.decode(rel, start, end, bytes, from, length, cut, modifiedAt,
            readingIdName != null ? readingIdName : rel));
        bytesLeft -= length;
      };
      boolean full = false;
      try {
        while (!full) {
          buf.clear();
          int n = ch.read(buf);
          if (n <= 0) {
            break;
          }
          split.feed(chunk, n, maxLines - out.size(), lines);
          full = out.size() >= maxLines || bytesLeft <= 0;
          // the writer left a last line without its newline and stopped: return it as it is
          if (!full && idle && split.flushAt(size, lines)) {
            full = out.size() >= maxLines || bytesLeft <= 0;
          }
        }
        if (!full) {
          split.end(lines);
        }
      } finally {
        state.position = split.position();
        state.discarding = split.discarding();
      }
    }
  }
}
