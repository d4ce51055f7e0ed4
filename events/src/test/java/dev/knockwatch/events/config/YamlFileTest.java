package dev.knockwatch.events.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class YamlFileTest {

  private final YamlFile file = new YamlFile("conf.yaml", new ArrayList<>());

  private YamlNode parse(String text) {
    return file.parse(text).orElseThrow();
  }

  @Test
  void everyValueKeepsItsLineInBlockAndFlowStyle() {
    YamlNode root = parse("""
        # a comment
        receivers:
          - {name: a, type: slack}
          - name: b
            type:
              console
        """);
    Map<String, YamlNode.Entry> top = root.mapping(null, Set.of("receivers")).orElseThrow();
    YamlNode.Entry receivers = top.get("receivers");
    assertThat(receivers.key().line()).isEqualTo(2);
    List<YamlNode> items = receivers.value().list("receivers");
    assertThat(items).extracting(YamlNode::line).containsExactly(3, 4);
    assertThat(items.get(0).entries("r")).extracting(e -> e.value().line()).containsExactly(3, 3);
    assertThat(items.get(1).entries("r")).extracting(e -> e.key().line() + "/" + e.value().line())
        .containsExactly("4/4", "5/6");
    items.get(1).entries("r").get(1).value().problem("receiver b: type is wrong");
    assertThat(file.problems()).containsExactly("conf.yaml:6: receiver b: type is wrong");
  }

  @Test
  void aSyntaxErrorIsAProblemAtItsLineAndNoRoot() {
    assertThat(file.parse("rules:\n  - id: a\n    window: [5m\n")).isEmpty();
    assertThat(file.problems()).singleElement().asString()
        .startsWith("conf.yaml:4: not valid YAML: while parsing a flow sequence");
    assertThatThrownBy(file::throwIfProblems).isInstanceOfSatisfying(ConfigException.class,
        e -> assertThat(e.problems()).isEqualTo(file.problems()));
  }

  @Test
  void anEmptyDocumentHasNoRootAndNoProblem() {
    assertThat(file.parse("# nothing\n")).isEmpty();
    assertThat(file.problems()).isEmpty();
    file.throwIfProblems();
  }

  @Test
  void unknownKeysAreProblemsAtTheKeysLineWithTheKnownOnesSorted() {
    YamlNode root = parse("b: 1\nzz: 2\na: 3\n");
    assertThat(root.mapping("source 1", Set.of("b", "a")).orElseThrow()).containsOnlyKeys("a", "b");
    assertThat(root.mapping(null, Set.of("b", "a")).orElseThrow()).containsOnlyKeys("a", "b");
    assertThat(file.problems()).containsExactly(
        "conf.yaml:2: source 1: unknown key \"zz\" (known: a, b)",
        "conf.yaml:2: unknown key \"zz\" (known: a, b)");
  }

  @Test
  void aValueOfTheWrongShapeIsAProblemAndReadsAsEmpty() {
    YamlNode root = parse("list: [a, b]\nmap: {a: 1}\nscalar: x\n");
    Map<String, YamlNode.Entry> m = root.mapping(null, Set.of("list", "map", "scalar")).orElseThrow();
    assertThat(m.get("list").value().mapping("list", Set.of())).isEmpty();
    assertThat(m.get("map").value().list("map")).isEmpty();
    assertThat(m.get("map").value().string("map")).isNull();
    assertThat(m.get("scalar").value().entries("scalar")).isEmpty();
    assertThat(m.get("scalar").value().oneOrMany("scalar")).extracting(YamlNode::text).containsExactly("x");
    assertThat(m.get("list").value().oneOrMany("list")).extracting(YamlNode::text).containsExactly("a", "b");
    assertThat(file.problems()).containsExactly(
        "conf.yaml:1: list must be a mapping",
        "conf.yaml:2: map must be a list",
        "conf.yaml:2: map: expected a string",
        "conf.yaml:3: scalar must be a mapping");
  }

  @Test
  void booleansNullsAndDurationsAreReadAsYamlTypes() {
    YamlNode root = parse("t: true\ny: yes\nf: false\ns: \"true\"\nn: ~\ne:\nd: 5m\nbad: soon\n");
    Map<String, YamlNode.Entry> m = root.mapping(null, Set.of("t", "y", "f", "s", "n", "e", "d", "bad")).orElseThrow();
    assertThat(m.get("t").value().bool()).contains(true);
    assertThat(m.get("y").value().bool()).contains(true);
    assertThat(m.get("f").value().bool()).contains(false);
    assertThat(m.get("s").value().bool()).as("a quoted string is no boolean").isEmpty();
    assertThat(m.get("n").value().isNull()).isTrue();
    assertThat(m.get("e").value().isNull()).isTrue();
    assertThat(m.get("s").value().isNull()).isFalse();
    assertThat(m.get("d").value().duration("window")).contains(Duration.ofMinutes(5));
    assertThat(m.get("bad").value().duration("rule r: window")).isEmpty();
    assertThat(file.problems()).containsExactly("conf.yaml:8: rule r: window \"soon\" is not a duration (like 30s, 5m, 1h)");
  }

  @Test
  void aFileThatCannotBeReadIsAProblemOfTheFile(@TempDir Path dir) {
    YamlFile missing = new YamlFile(dir.resolve("nope.yaml"));
    assertThat(missing.read(dir.resolve("nope.yaml"))).isEmpty();
    assertThat(missing.problems()).singleElement().asString().startsWith(dir.resolve("nope.yaml") + ": cannot read: ");
  }

  /** Whatever the text, parsing and walking it gives problems, never an exception. */
  @Test
  void randomTextNeverThrows() {
    Random random = new Random(27);
    String alphabet = "ab:-[]{}#&*!|>'\"\n \t%@`,?\\\u0000\ud800\u202e";
    for (int i = 0; i < 5_000; i++) {
      StringBuilder b = new StringBuilder();
      for (int n = random.nextInt(60); n > 0; n--) {
        b.append(alphabet.charAt(random.nextInt(alphabet.length())));
      }
      YamlFile f = new YamlFile("fuzz.yaml", new ArrayList<>());
      f.parse(b.toString()).ifPresent(YamlFileTest::walk);
      assertThat(f.problems()).allSatisfy(p -> assertThat(p).startsWith("fuzz.yaml"));
    }
  }

  private static void walk(YamlNode n) {
    n.text();
    n.bool();
    n.line();
    if (n.isMapping()) {
      n.entries("m").forEach(e -> {
        walk(e.key());
        walk(e.value());
      });
    } else if (n.isList()) {
      n.list("l").forEach(YamlFileTest::walk);
    } else {
      n.duration("d");
    }
  }
}
