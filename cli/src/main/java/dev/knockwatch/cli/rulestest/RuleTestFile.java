package dev.knockwatch.cli.rulestest;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.config.YamlFile;
import dev.knockwatch.events.config.YamlNode;
import dev.knockwatch.events.config.YamlNode.Entry;
import dev.knockwatch.ingest.Formats;
import java.nio.file.Path;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A rules test file ({@code ./knockwatch rules test FILE}), read with every problem at its line:
 * <pre>
 * rules: ..                         # the rules directory, from this file's directory (default ..)
 * start: 2026-11-29T18:45:00Z       # the time of a line that carries none (default 2026-01-01T00:00:00Z)
 * tests:
 *   - name: an agent that keeps trying pages once
 *     input:                         # files as a sandbox host lays them out: AGENT/COMMAND.SUFFIX
 *       - file: ci-runner-1/Cmd0000000000000000001.violations.jsonl
 *         at: 2026-11-29T18:46:00Z   # untimed lines: the command's nearest timed refusal, else this (default: start)
 *         lines: ['{"line":"deny network-outbound evil.example:443 (...)","timestamp":"..."}']
 *     expect:                        # alerts that must be raised (any of rule, command, agent, severity, status)
 *       - {rule: off-role-host, command: Cmd0000000000000000001, severity: page, status: firing}
 *     absent:                        # alerts that must not be
 *       - {rule: persistent-retry}
 * </pre>
 */
public record RuleTestFile(Path file, Path rules, List<Case> cases) {

  static final Instant DEFAULT_START = Instant.parse("2026-01-01T00:00:00Z");
  private static final Set<String> TOP = Set.of("rules", "start", "tests");
  private static final Set<String> CASE = Set.of("name", "start", "input", "expect", "absent");
  private static final Set<String> INPUT = Set.of("file", "at", "lines");
  private static final Set<String> ALERT = Set.of("rule", "command", "agent", "severity", "status");

  /** One test: the input files, and the alerts expected and forbidden. */
  public record Case(String name, int line, List<Input> inputs, List<AlertPattern> expect, List<AlertPattern> absent) {}

  /** A log file of the test: its path in the layout, the time of its untimed lines, its lines. */
  public record Input(String file, Instant at, List<String> lines) {}

  /** An alert to look for: every field given must be equal; the ones not given match anything. */
  public record AlertPattern(int line, String rule, String command, String agent, Alert.Severity severity,
      Alert.Status status) {

    public boolean matches(Alert a) {
      return (rule == null || rule.equals(a.rule())) && (command == null || command.equals(a.commandId()))
          && (agent == null || agent.equals(a.agentId())) && (severity == null || severity == a.severity())
          && (status == null || status == a.status());
    }

    @Override
    public String toString() {
      List<String> parts = new ArrayList<>();
      Optional.ofNullable(rule).ifPresent(v -> parts.add("rule " + v));
      Optional.ofNullable(command).ifPresent(v -> parts.add("command " + v));
      Optional.ofNullable(agent).ifPresent(v -> parts.add("agent " + v));
      Optional.ofNullable(severity).ifPresent(v -> parts.add("severity " + v.name().toLowerCase(Locale.ROOT)));
      Optional.ofNullable(status).ifPresent(v -> parts.add("status " + v.name().toLowerCase(Locale.ROOT)));
      return String.join(", ", parts) + " (line " + line + ")";
    }
  }

  /** The test file; a {@link dev.knockwatch.events.config.ConfigException} lists every problem at its line. */
  public static RuleTestFile read(Path file) {
    YamlFile yaml = new YamlFile(file);
    YamlNode root = yaml.read(file).flatMap(yaml::parse).orElse(null);
    if (root == null && yaml.problemCount() == 0) {
      yaml.problem("empty: it needs a \"tests:\" list");
    }
    yaml.throwIfProblems();
    Map<String, Entry> top = root.mapping(null, TOP).orElse(Map.of());
    Path dir = file.toAbsolutePath().getParent();
    Path rules = dir.resolve(top.containsKey("rules") ? top.get("rules").value().string("rules") : "..").normalize();
    Instant start = top.containsKey("start") ? instant(top.get("start").value(), "start") : DEFAULT_START;
    List<Case> cases = new ArrayList<>();
    Entry tests = top.get("tests");
    if (tests == null || tests.value().list("tests").isEmpty()) {
      yaml.problem(tests == null ? 1 : tests.value().line(), "needs a non-empty \"tests:\" list");
    } else {
      Set<String> names = new HashSet<>();
      for (YamlNode t : tests.value().list("tests")) {
        Case c = testCase(t, start, cases.size() + 1);
        if (c != null && !names.add(c.name())) {
          t.problem("test \"" + c.name() + "\": the name is used twice");
        }
        cases.add(c);
      }
    }
    yaml.throwIfProblems();
    return new RuleTestFile(file, rules, List.copyOf(cases));
  }

  private static Case testCase(YamlNode t, Instant fileStart, int index) {
    Map<String, Entry> keys = t.mapping("test " + index, CASE).orElse(null);
    if (keys == null) {
      return null;
    }
    String name = keys.containsKey("name") ? keys.get("name").value().string("name") : null;
    if (name == null || name.isBlank()) {
      t.problem("test " + index + ": no name");
      name = "test " + index;
    }
    String where = "test \"" + name + "\"";
    Instant start = keys.containsKey("start") ? instant(keys.get("start").value(), where + ": start") : fileStart;
    List<Input> inputs = new ArrayList<>();
    Set<String> files = new HashSet<>();
    if (!keys.containsKey("input") || keys.get("input").value().isList()
        && keys.get("input").value().list("input").isEmpty()) {
      (keys.containsKey("input") ? keys.get("input").value() : t).problem(where + ": no input");
    } else {
      for (YamlNode i : keys.get("input").value().list(where + ": input")) {
        Input in = input(i, where, start);
        if (in != null && !files.add(in.file())) {
          i.problem(where + ": file " + in.file() + " is given twice (give all its lines in one)");
        }
        inputs.add(in);
      }
    }
    List<AlertPattern> expect = patterns(keys.get("expect"), where + ": expect");
    List<AlertPattern> absent = patterns(keys.get("absent"), where + ": absent");
    if (expect.isEmpty() && absent.isEmpty()) {
      t.problem(where + ": expects nothing (give expect, absent or both)");
    }
    return new Case(name, t.line(), inputs, expect, absent);
  }

  private static Input input(YamlNode i, String where, Instant start) {
    Map<String, Entry> keys = i.mapping(where + ": input", INPUT).orElse(null);
    if (keys == null) {
      return null;
    }
    String file = keys.containsKey("file") ? keys.get("file").value().string(where + ": file") : null;
    if (file == null) {
      i.problem(where + ": an input needs its file (AGENT/COMMAND.SUFFIX)");
      return null;
    }
    String[] parts = file.split("/", -1);
    YamlNode at = keys.get("file").value();
    if (parts.length != 2 || parts[0].isBlank() || parts[0].startsWith(".") || parts[1].isBlank()
        || parts[1].startsWith(".")) {
      at.problem(where + ": file " + file + " is not AGENT/FILE, the layout ingest reads");
      return null;
    }
    if (Formats.ofFileName(parts[1]).isEmpty()) {
      at.problem(where + ": file " + file + " has no suffix ingest reads (" + suffixes() + ")");
      return null;
    }
    Instant time = keys.containsKey("at") ? instant(keys.get("at").value(), where + ": at") : start;
    List<String> lines = new ArrayList<>();
    if (keys.containsKey("lines")) {
      for (YamlNode l : keys.get("lines").value().oneOrMany(where + ": lines")) {
        String text = l.string(where + ": lines");
        if (text != null) {
          lines.add(text);
        }
      }
    }
    if (lines.isEmpty()) {
      i.problem(where + ": file " + file + " has no lines");
    }
    return new Input(file, time, List.copyOf(lines));
  }

  private static List<AlertPattern> patterns(Entry entry, String where) {
    List<AlertPattern> out = new ArrayList<>();
    if (entry == null) {
      return out;
    }
    for (YamlNode p : entry.value().list(where)) {
      Map<String, Entry> keys = p.mapping(where, ALERT).orElse(null);
      if (keys == null) {
        continue;
      }
      if (keys.isEmpty()) {
        p.problem(where + ": give at least one of " + String.join(", ", ALERT.stream().sorted().toList()));
        continue;
      }
      Alert.Severity severity = keys.containsKey("severity") ? named(Alert.Severity.class, keys.get("severity").value(),
          where + ": severity", "info, warning, page, critical") : null;
      Alert.Status status = keys.containsKey("status") ? named(Alert.Status.class, keys.get("status").value(),
          where + ": status", "firing, resolved") : null;
      out.add(new AlertPattern(p.line(), text(keys, "rule", where), text(keys, "command", where),
          text(keys, "agent", where), severity, status));
    }
    return out;
  }

  private static String text(Map<String, Entry> keys, String key, String where) {
    return keys.containsKey(key) ? keys.get(key).value().string(where + ": " + key) : null;
  }

  private static <E extends Enum<E>> E named(Class<E> type, YamlNode v, String where, String known) {
    String text = v.text();
    try {
      return Enum.valueOf(type, String.valueOf(text).toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      v.problem(where + " \"" + text + "\" is not one of " + known);
      return null;
    }
  }

  private static Instant instant(YamlNode v, String where) {
    String text = v.text();
    try {
      return Instant.parse(String.valueOf(text));
    } catch (DateTimeParseException e) {
      v.problem(where + " \"" + text + "\" is not a time like 2026-11-29T18:45:00Z");
      return DEFAULT_START;
    }
  }

  private static String suffixes() {
    return String.join(", ", Formats.all().stream().flatMap(t -> t.choice().suffixes().stream()).toList());
  }
}
