package dev.knockwatch.probes.codex;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.knockwatch.events.Json;
import dev.knockwatch.probes.sandbox.Checkout;
import dev.knockwatch.probes.sandbox.LoopbackRelay;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The real Codex CLI, run without a model: a private {@code HOME} and {@code CODEX_HOME} (no real
 * session, key or history is touched), the user's {@code config.toml} as given, and
 * {@link ResponsesStandIn} playing the model through a provider added on the command line
 * ({@code -c model_provider=…}), so that Codex runs a script of {@code exec_command} calls in its own
 * sandbox. It runs behind the network guard (a namespace holding only {@code lo}); the stand-in and
 * any other port given (knockwatch's OTLP endpoint) are reached through a {@link LoopbackRelay}.
 * {@code codex exec} runs one turn under {@code approval_policy = never} (exec forces it);
 * {@code codex app-server} is driven over its JSON-RPC, each approval it asks for answered with the
 * next of the given decisions.
 */
public final class Codex {

  /** Where the pinned build is installed ({@code npm ci}): {@code probes/codex/package-lock.json}. */
  public static final String RELATIVE_DIR = "probes/codex";
  public static final String BINARY = "node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex";
  public static final String HOW_TO_GET = "npm ci in probes/codex (the pinned @openai/codex 0.171.0), or --codex PATH"
      + " to a Codex CLI binary";
  static final String PROVIDER = "knockwatch-stand-in";
  static final String KEY_ENV = "KNOCKWATCH_STAND_IN_KEY";
  static final String PROMPT = "Run the knockwatch script.";

  private final Path binary;

  public Codex(Path binary) {
    this.binary = binary.toAbsolutePath();
  }

  public Path binary() {
    return binary;
  }

  /** The binary {@code explicit} names, else the pinned one of this checkout, installed when missing and {@code install}. */
  public static Optional<Codex> locate(Path explicit, boolean install, PrintStream say) {
    return Checkout.pinnedBinary(explicit, "KNOCKWATCH_CODEX", RELATIVE_DIR, BINARY, "the pinned Codex CLI", install, say)
        .map(Codex::new);
  }

  /**
   * Where a session runs: {@code home} (HOME: outside every root the sandbox may write, so that
   * {@code touch ~/x} is refused), {@code codexHome} (CODEX_HOME: its config.toml and sessions),
   * {@code project} (the working directory: a git repository, so {@code .git/hooks} exists) and
   * {@code tmp} (TMPDIR; null leaves it unset: /tmp, where Codex refuses to make its sandbox's
   * helper when CODEX_HOME is under /tmp too, and every command then fails).
   */
  public record Place(Path home, Path codexHome, Path project, Path tmp) {

    /**
     * A place under {@code dir}, which must not be under /tmp: workspace-write lets commands write
     * /tmp (a HOME there is no wall), and Codex will not make its sandbox's helper there.
     */
    public static Place under(Path dir) throws IOException, InterruptedException {
      Path d = dir.toAbsolutePath().normalize();
      if (d.startsWith("/tmp")) {
        throw new IOException(d + " is under /tmp, which Codex's sandbox lets commands write: run it elsewhere");
      }
      Place p = new Place(d.resolve("home"), d.resolve("codex-home"), d.resolve("project"), d.resolve("tmp"));
      p.create();
      return p;
    }

    /** A place whose sandbox cannot start: CODEX_HOME under /tmp, TMPDIR unset (Codex's own refusal to make its helper there). */
    public static Place broken(Path underTmp, Path home) throws IOException, InterruptedException {
      if (!underTmp.toAbsolutePath().normalize().startsWith("/tmp")) {
        throw new IOException(underTmp + " is not under /tmp");
      }
      Place p = new Place(home, underTmp.resolve("codex-home"), underTmp.resolve("project"), null);
      p.create();
      return p;
    }

    void create() throws IOException, InterruptedException {
      for (Path d : new Path[] {home, codexHome, project, tmp}) {
        if (d != null) {
          Files.createDirectories(d);
        }
      }
      if (!Files.isDirectory(project.resolve(".git"))) {
        Process git = new ProcessBuilder("git", "init", "-q", ".").directory(project.toFile()).redirectErrorStream(true)
            .start();
        git.getInputStream().readAllBytes();
        if (git.waitFor() != 0) {
          throw new IOException("git init failed in " + project);
        }
        Files.createDirectories(project.resolve(".git/hooks"));
      }
    }

    /** The session rollouts Codex wrote. */
    public List<Path> rollouts() throws IOException {
      Path sessions = codexHome.resolve("sessions");
      if (!Files.isDirectory(sessions)) {
        return List.of();
      }
      try (var files = Files.walk(sessions)) {
        return files.filter(f -> f.getFileName().toString().startsWith("rollout-")).sorted().toList();
      }
    }
  }

  /**
   * What a run left: its exit status, what it printed (exec's --json stream, app-server's
   * transcript), its errors, and the call ids the stand-in gave the calls, in order.
   */
  public record Result(int exitCode, String stdout, String stderr, List<String> callIds) {}

  /** The overrides that make the stand-in Codex's model provider. */
  static List<String> provider(ResponsesStandIn model) {
    String p = "model_providers." + PROVIDER + ".";
    return List.of("model=\"gpt-5.5\"", "model_provider=\"" + PROVIDER + "\"", p + "name=\"knockwatch stand-in\"",
        p + "base_url=\"" + model.baseUrl() + "\"", p + "wire_api=\"responses\"", p + "env_key=\"" + KEY_ENV + "\"");
  }

  /** {@code codex exec --json} of one turn of {@code script}; {@code ports}: more host ports it reaches (the OTLP endpoint). */
  public Result exec(Place place, List<ResponsesStandIn.Turn> script, List<Integer> ports, Duration timeout)
      throws IOException, InterruptedException {
    return exec(place, script, ports, timeout, List.of());
  }

  /** As {@link #exec(Place, List, List, Duration)}, with more {@code -c key=value} overrides of the config. */
  public Result exec(Place place, List<ResponsesStandIn.Turn> script, List<Integer> ports, Duration timeout,
      List<String> overrides) throws IOException, InterruptedException {
    try (ResponsesStandIn model = new ResponsesStandIn(script);
         LoopbackRelay relay = new LoopbackRelay(place.home().resolve(".relay"), with(ports, model.port()))) {
      List<String> argv = new ArrayList<>(List.of(binary.toString()));
      provider(model).forEach(o -> argv.addAll(List.of("-c", o)));
      overrides.forEach(o -> argv.addAll(List.of("-c", o)));
      argv.addAll(List.of("exec", "--json", "--skip-git-repo-check", PROMPT));
      Process p = start(place, relay.wrap(argv));
      p.getOutputStream().close();
      Path out = place.home().resolve("codex-stdout.jsonl");
      Path err = place.home().resolve("codex-stderr.txt");
      if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly();
        throw new IOException("Codex did not finish within " + timeout.toSeconds() + " s");
      }
      return new Result(p.exitValue(), Files.readString(out), Files.readString(err), model.callIds());
    }
  }

  /**
   * {@code codex app-server}, driven as a client would: one thread, one turn of {@code script},
   * each approval request answered with the next of {@code decisions} ({@code accept}, {@code decline};
   * {@code decline} when they run out).
   */
  public Result appServer(Place place, List<ResponsesStandIn.Turn> script, List<String> decisions, List<Integer> ports,
      Duration timeout) throws IOException, InterruptedException {
    return appServer(place, script, decisions, ports, timeout, List.of());
  }

  /** As {@link #appServer(Place, List, List, List, Duration)}, with more {@code -c key=value} overrides. */
  public Result appServer(Place place, List<ResponsesStandIn.Turn> script, List<String> decisions, List<Integer> ports,
      Duration timeout, List<String> overrides) throws IOException, InterruptedException {
    try (ResponsesStandIn model = new ResponsesStandIn(script);
         LoopbackRelay relay = new LoopbackRelay(place.home().resolve(".relay"), with(ports, model.port()))) {
      List<String> argv = new ArrayList<>(List.of(binary.toString()));
      provider(model).forEach(o -> argv.addAll(List.of("-c", o)));
      overrides.forEach(o -> argv.addAll(List.of("-c", o)));
      argv.add("app-server");
      ProcessBuilder pb = builder(place, relay.wrap(argv));
      pb.redirectOutput(ProcessBuilder.Redirect.PIPE);
      Process p = pb.start();
      StringBuilder transcript = new StringBuilder();
      Deque<String> answers = new ArrayDeque<>(decisions);
      long deadline = System.nanoTime() + timeout.toNanos();
      try (OutputStream in = p.getOutputStream();
           BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
        JsonRpc rpc = new JsonRpc(in, out, transcript, deadline);
        ObjectNode init = Json.MAPPER.createObjectNode();
        init.putObject("clientInfo").put("name", "knockwatch").put("title", "knockwatch probe").put("version", "1");
        rpc.call("initialize", init, answers);
        rpc.notify("initialized");
        ObjectNode start = Json.MAPPER.createObjectNode().put("cwd", place.project().toString());
        JsonNode thread = rpc.call("thread/start", start, answers);
        String threadId = thread.path("thread").path("id").asText();
        ObjectNode turn = Json.MAPPER.createObjectNode().put("threadId", threadId);
        turn.putArray("input").addObject().put("type", "text").put("text", PROMPT).putArray("text_elements");
        rpc.call("turn/start", turn, answers);
        rpc.awaitNotification("turn/completed", answers);
      } catch (IOException e) {
        transcript.append("driver: ").append(e.getMessage()).append('\n');
      }
      if (!p.waitFor(Math.max(1, (deadline - System.nanoTime()) / 1_000_000), TimeUnit.MILLISECONDS)) {
        p.destroy();
        if (!p.waitFor(10, TimeUnit.SECONDS)) {
          p.destroyForcibly();
        }
      }
      return new Result(p.isAlive() ? -1 : p.exitValue(), transcript.toString(),
          Files.readString(place.home().resolve("codex-stderr.txt")), model.callIds());
    }
  }

  private Process start(Place place, List<String> argv) throws IOException {
    ProcessBuilder pb = builder(place, argv);
    pb.redirectOutput(place.home().resolve("codex-stdout.jsonl").toFile());
    return pb.start();
  }

  private static ProcessBuilder builder(Place place, List<String> argv) {
    ProcessBuilder pb = new ProcessBuilder(argv).directory(place.project().toFile());
    pb.environment().keySet().removeIf(k -> k.startsWith("OPENAI_") || k.startsWith("CODEX_") || k.equals("TMPDIR"));
    pb.environment().put("HOME", place.home().toString());
    pb.environment().put("CODEX_HOME", place.codexHome().toString());
    if (place.tmp() != null) {
      pb.environment().put("TMPDIR", place.tmp().toString());
    }
    pb.environment().put(KEY_ENV, "knockwatch-stand-in-not-a-key");
    pb.redirectError(place.home().resolve("codex-stderr.txt").toFile());
    return pb;
  }

  private static List<Integer> with(List<Integer> ports, int model) {
    List<Integer> all = new ArrayList<>(ports);
    all.add(model);
    return all;
  }

  /** A JSON-RPC client of one line a message, answering the server's approval requests as told. */
  private static final class JsonRpc {
    private final OutputStream in;
    private final BufferedReader out;
    private final StringBuilder transcript;
    private final long deadline;
    private int next = 1;

    JsonRpc(OutputStream in, BufferedReader out, StringBuilder transcript, long deadline) {
      this.in = in;
      this.out = out;
      this.transcript = transcript;
      this.deadline = deadline;
    }

    JsonNode call(String method, JsonNode params, Deque<String> answers) throws IOException {
      int id = next++;
      ObjectNode request = Json.MAPPER.createObjectNode().put("id", id).put("method", method);
      request.set("params", params);
      send(request);
      while (true) {
        JsonNode m = read(answers);
        if (m.has("id") && !m.has("method") && m.path("id").asInt() == id) {
          if (m.has("error")) {
            throw new IOException(method + " failed: " + m.path("error"));
          }
          return m.path("result");
        }
      }
    }

    void notify(String method) throws IOException {
      send(Json.MAPPER.createObjectNode().put("method", method));
    }

    void awaitNotification(String method, Deque<String> answers) throws IOException {
      while (!method.equals(read(answers).path("method").asText())) {
        // the turn's items and events go by
      }
    }

    /** The next message, after answering it when it is a request (an approval: the next decision). */
    private JsonNode read(Deque<String> answers) throws IOException {
      while (true) {
        if (System.nanoTime() > deadline) {
          throw new IOException("app-server did not finish in time");
        }
        String line = out.readLine();
        if (line == null) {
          throw new IOException("app-server ended");
        }
        transcript.append(line).append('\n');
        JsonNode m;
        try {
          m = Json.MAPPER.readTree(line);
        } catch (IOException e) {
          continue;
        }
        if (m.has("id") && m.has("method")) {
          String method = m.path("method").asText();
          if (method.endsWith("requestApproval") || method.equals("execCommandApproval")) {
            String decision = answers.isEmpty() ? "decline" : answers.poll();
            ObjectNode answer = Json.MAPPER.createObjectNode();
            answer.set("id", m.get("id"));
            answer.set("result", Json.MAPPER.createObjectNode().put("decision", decision));
            send(answer);
          } else {
            ObjectNode error = Json.MAPPER.createObjectNode().put("code", -32601).put("message", "not handled: " + method);
            ObjectNode answer = Json.MAPPER.createObjectNode();
            answer.set("id", m.get("id"));
            answer.set("error", error);
            send(answer);
          }
          continue;
        }
        return m;
      }
    }

    private void send(JsonNode m) throws IOException {
      String line = m.toString();
      transcript.append(line).append('\n');
      in.write((line + "\n").getBytes(StandardCharsets.UTF_8));
      in.flush();
    }
  }
}
