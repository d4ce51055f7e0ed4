package dev.knockwatch.streams.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.streams.timeline.TimelineIndex;
import dev.knockwatch.streams.timeline.TimelineIndex.AlertRow;
import dev.knockwatch.streams.timeline.TimelineIndex.CommandRow;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Predicate;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.state.KeyValueIterator;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * The two lists as one instance answers them, from each of its partitions' {@link TimelineIndex}:
 * a key range read newest first and left as soon as {@code limit} rows passed the filter, so a
 * list costs its limit (plus the rows the filter turns away), not the store. The range is bounded
 * by {@code since} and {@code until}; commands of one named agent are read from that agent's range;
 * alerts from their status's ranges, one severity after another, critical first.
 */
final class IndexLists {

  private static final List<Alert.Severity> MOST_SEVERE_FIRST = Arrays.asList(Alert.Severity.CRITICAL,
      Alert.Severity.PAGE, Alert.Severity.WARNING, Alert.Severity.INFO, null);

  private IndexLists() {}

  static List<CommandRow> commands(List<ReadOnlyKeyValueStore<String, String>> partitions, ListFilter f, int limit) {
    if (f.emptyRange()) {
      return List.of();
    }
    String prefix = f.exactAgent() != null ? TimelineIndex.agentPrefix(f.exactAgent()) : TimelineIndex.commandsPrefix();
    String[] range = TimelineIndex.range(prefix, f.since(), f.until());
    List<CommandRow> out = new ArrayList<>();
    for (ReadOnlyKeyValueStore<String, String> part : partitions) {
      out.addAll(read(part, range, CommandRow.class, f::command, limit));
    }
    out.sort(ListFilter.COMMAND_ORDER);
    return first(out, limit);
  }

  static List<AlertRow> alerts(List<ReadOnlyKeyValueStore<String, String>> partitions, ListFilter f, int limit) {
    if (f.emptyRange()) {
      return List.of();
    }
    List<AlertRow> out = new ArrayList<>();
    for (ReadOnlyKeyValueStore<String, String> part : partitions) {
      for (boolean firing : f.firing()) {
        int taken = 0;
        for (Alert.Severity severity : MOST_SEVERE_FIRST) {
          if (taken >= limit) {
            break;
          }
          if (!f.severities().isEmpty() && !f.severities().contains(severity)) {
            continue;
          }
          String[] range = TimelineIndex.range(TimelineIndex.alertPrefix(firing, severity), f.since(), f.until());
          List<AlertRow> rows = read(part, range, AlertRow.class, f::alert, limit - taken);
          out.addAll(rows);
          taken += rows.size();
        }
      }
    }
    out.sort(ListFilter.ALERT_ORDER);
    return first(out, limit);
  }

  private static <T> List<T> read(ReadOnlyKeyValueStore<String, String> store, String[] range, Class<T> type,
      Predicate<T> pass, int limit) {
    List<T> out = new ArrayList<>();
    try (KeyValueIterator<String, String> it = store.range(range[0], range[1])) {
      while (it.hasNext() && out.size() < limit) {
        KeyValue<String, String> kv = it.next();
        T row = parse(kv.value, type);
        if (pass.test(row)) {
          out.add(row);
        }
      }
    }
    return out;
  }

  private static <T> T parse(String json, Class<T> type) {
    try {
      return Json.MAPPER.readValue(json, type);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }

  static <T> List<T> first(List<T> rows, int limit) {
    return rows.size() <= limit ? rows : new ArrayList<>(rows.subList(0, limit));
  }
}
