package dev.knockwatch.ingest.tail;

import dev.knockwatch.ingest.tail.CheckpointStore.Checkpoint;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The files a {@link FileTailer} knows: each one's {@link FileState} by its name under the root
 * and by the path the walk finds it at, and what of them the checkpoint file does not hold yet.
 * A stream of lines moves from one name to another when its file is rotated ({@link #handOver},
 * {@link #continuesStream}); its lines keep the ids they had.
 */
final class KnownFiles {

  private static final Logger log = LoggerFactory.getLogger(FileTailer.class);

  private final Path root;
  /** Where positions are kept between runs; null: in memory only. */
  private final CheckpointStore checkpoints;
  final Map<String, FileState> files = new LinkedHashMap<>();
  /**
   * Each file's state by the path the walk finds it at: every poll visits every file, most of them
   * idle, and its relative path and key text cost strings each time (1.5 KB a file a poll).
   */
  final Map<Path, FileState> byPath = new HashMap<>();
  /** The files whose checkpoint changed since it was last written, and the files gone since then. */
  final Set<FileState> unsaved = new LinkedHashSet<>();
  final Set<String> removed = new LinkedHashSet<>();
  /** The files whose position moved since the last {@code mark()}: the next mark holds only these. */
  final Set<FileState> moved = new java.util.HashSet<>();

  KnownFiles(Path root, CheckpointStore checkpoints) {
    this.root = root;
    this.checkpoints = checkpoints;
  }

  /**
   * {@code state}, the stream read at {@code file}, continues at {@code rotated}, where its file
   * now is: its rest is read there next, and {@code file} starts anew as the next file of the stream.
   */
  void handOver(FileState state, Path file, Path rotated, boolean replaced) throws IOException {
    String rel = state.rel;
    String rotatedRel = relative(rotated);
    log.info("{} was rotated to {}: reading the rest of it there{}", FileTailer.shown(rel), FileTailer.shown(rotatedRel),
        replaced ? ", and the new " + FileTailer.shown(rel) + " from its start" : "");
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
      next.idName = RotatedNames.afterRotation(rel, Files.readAttributes(file, BasicFileAttributes.class).fileKey(), state.head);
      files.put(rel, next);
      byPath.put(file, next);
      unsaved.add(next);
    } else {
      byPath.remove(file);
      removed.add(rel);
    }
  }

  /**
   * A rotated name first seen may continue its stream: the file read so far under the stream's
   * name, moved here (the same file key), goes on from where it was; a copy of that file made
   * before it was truncated in place (copytruncate: the head it had then) is read only past what
   * was read there. The state to read {@code file} with.
   */
  FileState continuesStream(FileState state, Path file, BasicFileAttributes attrs) throws IOException {
    String base = RotatedNames.rotatedFrom(file.getFileName().toString());
    Path basePath = base == null ? null : file.resolveSibling(base);
    FileState from = basePath == null ? null : files.get(relative(basePath));
    if (from == null || from == state) {
      return state;
    }
    Object key = attrs.fileKey();
    if (key != null && key.toString().equals(from.fileKey) && !Files.exists(basePath)) {
      log.info("{} was rotated to {}: reading the rest of it there", FileTailer.shown(from.rel), FileTailer.shown(state.rel));
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
        || !from.truncatedHead.equals(FileState.headOf(file, from.truncatedHeadLength))) {
      return state;
    }
    log.info("{} is the copy of {} made before it was truncated: reading it past the {} bytes read there",
        FileTailer.shown(state.rel), FileTailer.shown(from.rel), from.truncatedAt);
    state.position = from.truncatedAt;
    state.committed = from.truncatedAt;
    state.head = from.truncatedHead;
    state.headLength = from.truncatedHeadLength;
    state.idName = from.truncatedIdName; // the copy's lines past the cut were the truncated file's, at the same offsets
    from.truncatedHead = null;
    unsaved.add(state);
    return state;
  }

  String relative(Path file) {
    return root.relativize(file).toString().replace('\\', '/');
  }

  void load() {
    if (checkpoints != null) {
      checkpoints.load().forEach((file, at) -> files.put(file, FileState.restored(at)));
    }
  }

  /** Writes what changed since the last write ({@link CheckpointStore}). */
  void save() {
    if (checkpoints == null || (unsaved.isEmpty() && removed.isEmpty())) {
      return;
    }
    Map<String, Checkpoint> changed = new LinkedHashMap<>();
    unsaved.forEach(s -> changed.put(s.rel, s.checkpoint()));
    checkpoints.save(removed, changed, files.size(), () -> {
      Map<String, Checkpoint> all = new HashMap<>();
      files.forEach((file, s) -> all.put(file, s.checkpoint()));
      return all;
    });
    unsaved.clear();
    removed.clear();
  }
}
