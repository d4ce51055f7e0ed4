package dev.knockwatch.ingest.tail;

import com.fasterxml.jackson.core.type.TypeReference;
import dev.knockwatch.events.Json;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the tailer's files stand between runs: a JSON file of every file's checkpoint, and beside
 * it a journal of the changes since, one line each, so a commit costs the files it moved, not
 * every file known. Once the journal holds more entries than there are files (and
 * {@link #MIN_JOURNAL_ENTRIES}), the checkpoint file is rewritten whole (atomically) and the
 * journal deleted. A crash between the two leaves the journal's older entries to be applied again
 * at start: positions go back, lines are sent again with their ids, and none is lost.
 */
final class CheckpointStore {

  private static final Logger log = LoggerFactory.getLogger(CheckpointStore.class);

  /** A commit rewrites the checkpoint file whole only after this many journal entries, or as many as files. */
  static final int MIN_JOURNAL_ENTRIES = 1_000;

  /** One file's checkpoint: its identity (key and head), the committed offset, and the name its lines' ids are made from. */
  record Checkpoint(String fileKey, long offset, String head, int headLength, String idName) {}

  /** A change appended to the journal: a file's new checkpoint, or null when it is gone. */
  private record JournalEntry(String file, Checkpoint at) {}

  private final Path file;
  private final Path journal;
  /** Entries in the journal now. */
  private int journaled;

  CheckpointStore(Path file) {
    this.file = file;
    this.journal = file.resolveSibling(file.getFileName() + ".journal");
  }

  /**
   * Every file's checkpoint as last saved: the checkpoint file, then its journal's changes in
   * order. A last journal line cut short (a crash mid-write: that commit did not happen) is
   * ignored; anything else unreadable stops the agent, saying which file to delete.
   */
  Map<String, Checkpoint> load() {
    Map<String, Checkpoint> files = new LinkedHashMap<>();
    if (Files.exists(file)) {
      try {
        files.putAll(Json.MAPPER.readValue(file.toFile(), new TypeReference<Map<String, Checkpoint>>() {}));
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read the ingest checkpoint " + file
            + " (delete it to read every file from its start)", e);
      }
    }
    if (!Files.exists(journal)) {
      return files;
    }
    List<String> lines;
    try {
      lines = Files.readAllLines(journal, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw badJournal("", e);
    }
    for (int i = 0; i < lines.size(); i++) {
      JournalEntry e;
      try {
        e = Json.MAPPER.readValue(lines.get(i), JournalEntry.class);
      } catch (IOException bad) {
        if (i == lines.size() - 1) {
          log.warn("the ingest checkpoint journal {} ends in an unfinished entry: ignored", journal);
          break;
        }
        throw badJournal(", line " + (i + 1), bad);
      }
      if (e.file() == null) {
        throw badJournal(", line " + (i + 1), new IOException("the entry names no file"));
      }
      if (e.at() == null) {
        files.remove(e.file());
      } else {
        files.put(e.file(), e.at());
      }
      journaled++;
    }
    return files;
  }

  private UncheckedIOException badJournal(String where, IOException cause) {
    return new UncheckedIOException("cannot read the ingest checkpoint journal " + journal + where
        + " (delete it and " + file.getFileName() + " to read every file from its start)", cause);
  }

  /**
   * Saves what changed: the files gone, then the files' new checkpoints, appended to the journal;
   * or, once the journal would outgrow {@code knownFiles}, {@code all} of them as the checkpoint
   * file, and the journal starts anew.
   */
  void save(Collection<String> removed, Map<String, Checkpoint> changed, int knownFiles,
      Supplier<Map<String, Checkpoint>> all) {
    if (removed.isEmpty() && changed.isEmpty()) {
      return;
    }
    try {
      Files.createDirectories(file.toAbsolutePath().getParent());
      int changes = removed.size() + changed.size();
      if (journaled + changes > Math.max(MIN_JOURNAL_ENTRIES, knownFiles)) {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Json.MAPPER.writeValue(tmp.toFile(), all.get());
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        Files.deleteIfExists(journal);
        journaled = 0;
      } else {
        ByteArrayOutputStream lines = new ByteArrayOutputStream();
        for (String gone : removed) {
          Json.MAPPER.writeValue(lines, new JournalEntry(gone, null));
          lines.write('\n');
        }
        for (Map.Entry<String, Checkpoint> e : changed.entrySet()) {
          Json.MAPPER.writeValue(lines, new JournalEntry(e.getKey(), e.getValue()));
          lines.write('\n');
        }
        Files.write(journal, lines.toByteArray(), StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        journaled += changes;
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the ingest checkpoint " + file, e);
    }
  }

  /** Entries in the journal now (the checkpoint file holds the rest). */
  int journaled() {
    return journaled;
  }
}
