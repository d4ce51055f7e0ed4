package dev.knockwatch.ingest.tail;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.knockwatch.ingest.tail.CheckpointStore.Checkpoint;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Where the tailer's positions are kept between runs: the checkpoint file and its journal. */
class CheckpointStoreTest {

  @TempDir Path dir;

  private static Checkpoint at(long offset) {
    return new Checkpoint("(dev=1,ino=" + offset + ")", offset, "abcd", 4, null);
  }

  @Test
  void changesGoToTheJournalAndARestartSeesThemInOrder() throws Exception {
    Path file = dir.resolve("checkpoint.json");
    CheckpointStore store = new CheckpointStore(file);
    assertThat(store.load()).isEmpty();
    store.save(List.of(), Map.of("a.log", at(10), "b.log", at(20)), 2, Map::of);
    store.save(List.of("b.log"), Map.of("a.log", at(30)), 2, Map::of);
    assertThat(Files.exists(file)).as("a commit costs the files it moved: the journal only").isFalse();
    assertThat(Files.readAllLines(dir.resolve("checkpoint.json.journal"))).hasSize(4);
    assertThat(new CheckpointStore(file).load()).containsExactly(Map.entry("a.log", at(30)));
  }

  @Test
  void aJournalLongerThanTheFilesIsFoldedIntoTheCheckpointFile() throws Exception {
    Path file = dir.resolve("checkpoint.json");
    CheckpointStore store = new CheckpointStore(file);
    Map<String, Checkpoint> all = new HashMap<>();
    for (int i = 0; i <= CheckpointStore.MIN_JOURNAL_ENTRIES; i++) {
      all.put("a.log", at(i));
      store.save(List.of(), Map.of("a.log", at(i)), 1, () -> Map.copyOf(all));
    }
    assertThat(store.journaled()).isZero();
    assertThat(Files.exists(dir.resolve("checkpoint.json.journal"))).isFalse();
    assertThat(new CheckpointStore(file).load()).containsExactly(Map.entry("a.log", at(CheckpointStore.MIN_JOURNAL_ENTRIES)));
  }

  @Test
  void aJournalEntryCutShortByACrashIsThatCommitNotHappening() throws Exception {
    Path file = dir.resolve("checkpoint.json");
    new CheckpointStore(file).save(List.of(), new LinkedHashMap<>(Map.of("a.log", at(10))), 1, Map::of);
    Files.writeString(dir.resolve("checkpoint.json.journal"), "{\"file\":\"a.log\",\"at\":{\"offs", StandardCharsets.UTF_8,
        StandardOpenOption.APPEND);
    assertThat(new CheckpointStore(file).load()).containsExactly(Map.entry("a.log", at(10)));
  }

  @Test
  void anUnreadableEntryBeforeTheLastStopsAndSaysWhatToDelete() throws Exception {
    Path file = dir.resolve("checkpoint.json");
    Files.writeString(dir.resolve("checkpoint.json.journal"), "not json\n{\"file\":\"a.log\",\"at\":null}\n");
    assertThatThrownBy(() -> new CheckpointStore(file).load()).isInstanceOf(UncheckedIOException.class)
        .hasMessageContaining("checkpoint.json.journal, line 1").hasMessageContaining("delete it and checkpoint.json");
    Files.writeString(dir.resolve("checkpoint.json.journal"), "{\"at\":null}\n{}\n");
    assertThatThrownBy(() -> new CheckpointStore(file).load()).hasMessageContaining("line 1");
    Files.writeString(file, "[broken");
    assertThatThrownBy(() -> new CheckpointStore(file).load()).isInstanceOf(UncheckedIOException.class)
        .hasMessageContaining("delete it to read every file from its start");
  }
}
