package dev.knockwatch.ingest.tail;

import dev.knockwatch.events.Hashes;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Where one file stands: its identity (device + inode, and a hash of its first bytes, since an
 * inode is reused once a file is deleted), what was read, and what is committed.
 */
final class FileState {

  /** A file's state as its checkpoint left it. */
  static FileState restored(CheckpointStore.Checkpoint cp) {
    FileState s = new FileState();
    s.fileKey = cp.fileKey();
    s.head = cp.head();
    s.headLength = cp.headLength();
    s.position = cp.offset();
    s.committed = cp.offset();
    s.idName = cp.idName();
    return s;
  }

  /** What is committed of it, with its identity: what a restart goes on from. */
  CheckpointStore.Checkpoint checkpoint() {
    return new CheckpointStore.Checkpoint(fileKey == null ? null : fileKey.toString(), committed, head, headLength, idName);
  }

  /** A hash of the first {@code length} bytes of the file: part of its identity. */
  static String headOf(Path file, int length) throws IOException {
    byte[] b = new byte[length];
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      ByteBuffer buf = ByteBuffer.wrap(b);
      while (buf.hasRemaining() && ch.read(buf) > 0) {
        // fill
      }
    }
    return Hashes.sha256Hex(b, 8);
  }

  String rel;
  /**
   * What the lines' ids are made from: the name the file was first read under, kept when it is
   * rotated to another name (its lines keep their ids however often they are read again), and
   * for a file that came after a rotation, that name with its identity
   * ({@code FileTailer.afterRotation}). Null: {@link #rel}.
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

  /** Before it restarts in place (truncated): what its copy needs, and a new id name for what follows. */
  void truncated() {
    truncatedAt = position;
    truncatedHead = head;
    truncatedHeadLength = headLength;
    truncatedIdName = idName != null ? idName : rel;
    idName = RotatedNames.afterRotation(rel, fileKey, head);
  }

  void restart() {
    position = 0;
    committed = 0;
    discarding = false;
    generation++;
    head = null; // the new content's head, read anew: the old one would make its next append look like a new file
    headLength = 0;
  }
}
