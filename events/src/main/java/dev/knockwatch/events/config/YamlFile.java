package dev.knockwatch.events.config;

import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;

/**
 * One YAML configuration file being read. Its {@link YamlNode}s keep the line they stand on, and
 * every problem found is collected as {@code FILE:LINE: problem}, so a reader reports them all at
 * once ({@link #throwIfProblems}) instead of stopping at the first. Every config reader (rules and
 * roles, receivers, ingest sources) reads through this one class.
 */
public final class YamlFile {

  private final String name;
  private final List<String> problems;

  /** A file named {@code name} in problems, collecting them into {@code problems} (which several files may share). */
  public YamlFile(String name, List<String> problems) {
    this.name = name;
    this.problems = problems;
  }

  public YamlFile(Path file) {
    this(file.toString(), new ArrayList<>());
  }

  public String name() {
    return name;
  }

  /** The file's text; empty after a problem that says why it cannot be read. */
  public Optional<String> read(Path file) {
    try {
      return Optional.of(Files.readString(file, StandardCharsets.UTF_8));
    } catch (IOException e) {
      problem("cannot read: " + e.getMessage());
      return Optional.empty();
    }
  }

  /**
   * The document's root node; empty after a problem naming the line of a syntax error, or when
   * the document is empty.
   */
  public Optional<YamlNode> parse(String text) {
    try {
      return Optional.ofNullable(new Yaml(new SafeConstructor(new LoaderOptions())).compose(new StringReader(text)))
          .map(n -> new YamlNode(this, n));
    } catch (MarkedYAMLException e) {
      int line = e.getProblemMark() == null ? 1 : e.getProblemMark().getLine() + 1;
      problems.add(name + ":" + line + ": not valid YAML: " + (e.getContext() == null ? "" : e.getContext() + ": ")
          + e.getProblem());
      return Optional.empty();
    } catch (YAMLException e) {
      problem("not valid YAML: " + e.getMessage().lines().findFirst().orElse(""));
      return Optional.empty();
    }
  }

  /** A problem of the whole file (it cannot be read, it is empty): {@code FILE: problem}. */
  public void problem(String message) {
    problems.add(name + ": " + message);
  }

  /** A problem at {@code line}: {@code FILE:LINE: problem}. */
  public void problem(int line, String message) {
    problems.add(name + ":" + line + ": " + message);
  }

  public List<String> problems() {
    return List.copyOf(problems);
  }

  public int problemCount() {
    return problems.size();
  }

  /** Throws every problem collected so far as one {@link ConfigException}. */
  public void throwIfProblems() {
    if (!problems.isEmpty()) {
      throw new ConfigException(problems);
    }
  }
}
