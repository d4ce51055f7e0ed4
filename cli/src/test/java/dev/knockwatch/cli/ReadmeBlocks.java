package dev.knockwatch.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The README's fenced blocks (or another doc's: docs/WALLS.md), each with what its fence says it is ({@code sh}: a command a user
 * is told to run; {@code text}: output; {@code yaml}, {@code json}, {@code properties}: a file's
 * content), as a reader sees them (a list item's indent removed), and a {@code sh} block run
 * verbatim with bash.
 */
record ReadmeBlocks(String doc, List<Block> blocks) {

  /** One block: its kind, its text, and the README line of its fence. */
  record Block(String kind, String text, int line) {
    String firstLine() {
      return text.lines().findFirst().orElse("");
    }
  }

  static ReadmeBlocks read() throws IOException {
    return read("README.md");
  }

  /** The blocks of {@code doc}, a path in the repository ({@code docs/WALLS.md}), read as the README's are. */
  static ReadmeBlocks read(String doc) throws IOException {
    List<String> lines = Files.readAllLines(Launched.REPO.resolve(doc), StandardCharsets.UTF_8);
    List<Block> blocks = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      String fence = lines.get(i);
      if (!fence.strip().startsWith("```")) {
        continue;
      }
      int indent = fence.indexOf('`');
      String kind = fence.strip().substring(3);
      StringBuilder text = new StringBuilder();
      int j = i + 1;
      while (!lines.get(j).strip().equals("```")) {
        String l = lines.get(j);
        text.append(l.length() >= indent && l.substring(0, indent).isBlank() ? l.substring(indent) : l.strip()).append('\n');
        j++;
      }
      blocks.add(new Block(kind, text.toString(), i + 1));
      i = j;
    }
    return new ReadmeBlocks(doc, List.copyOf(blocks));
  }

  /** The one block of {@code kind} whose first line starts with {@code start}. */
  Block starting(String kind, String start) {
    List<Block> found = blocks.stream().filter(b -> b.kind().equals(kind) && b.firstLine().startsWith(start)).toList();
    if (found.size() != 1) {
      throw new AssertionError(doc + " has " + found.size() + " " + kind + " blocks starting " + start);
    }
    return found.get(0);
  }

  /** The output of a finished run of a block. */
  record Ran(int exit, String output) {}

  /** Runs {@code block} with bash (-e: a failing line fails the block) in {@code dir}, with {@code env} added. */
  static Ran run(Block block, Path dir, Map<String, String> env) throws IOException, InterruptedException {
    ProcessBuilder pb = new ProcessBuilder("bash", "-e", "-c", block.text()).directory(dir.toFile()).redirectErrorStream(true);
    pb.environment().putAll(env);
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!p.waitFor(120, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("the block at line " + block.line() + " did not end within 2 minutes:\n" + out);
    }
    return new Ran(p.exitValue(), out);
  }

  /**
   * Runs {@code block} again, every 500 ms, until its output holds every one of {@code lines} or
   * {@code within} has passed, as a user asks again: what a page shows reaches a query a commit or
   * two after the page (detection's, then the timeline's). The last run's output.
   */
  static Ran runUntil(Block block, Path dir, Map<String, String> env, List<String> lines, Duration within)
      throws IOException, InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    Ran ran = run(block, dir, env);
    while (!lines.stream().allMatch(ran.output()::contains) && System.nanoTime() < deadline) {
      Thread.sleep(500);
      ran = run(block, dir, env);
    }
    return ran;
  }
}
