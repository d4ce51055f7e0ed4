package dev.knockwatch.ingest.formats.claudecode;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.FsPaths;
import dev.knockwatch.events.HostClassifier;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Redactor;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.spi.Attribution;
import dev.knockwatch.ingest.spi.EventIds;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.Rejection;
import dev.knockwatch.ingest.spi.SourceLine;
import dev.knockwatch.ingest.formats.proxy.CurlTranscriptParser;
import dev.knockwatch.ingest.formats.srt.SrtFormat;
import dev.knockwatch.ingest.formats.proxy.ProxyWords;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Claude Code's hook records ({@code ./knockwatch claude-code settings} installs the hook that
 * writes them): one JSON object a line, {@code <agentId>/<sessionId>.claude-code.jsonl}, one
 * line per Bash call's {@code PreToolUse} and one per its {@code PostToolUse} or
 * {@code PostToolUseFailure} (the types: {@code sdk.d.ts} of {@code @anthropic-ai/claude-agent-sdk}).
 *
 * <p>Who wrote what (docs/TRUST.md): the record is Claude Code's, encoded by it, outside the
 * sandbox; {@code session_id}, {@code prompt_id} (the task: one user prompt), {@code tool_use_id}
 * (the command: one tool call), {@code cwd} and the hook event are the harness's. The command text
 * is the model's, the output the command's: read as evidence, never as identity.
 *
 * <p>Three kinds of evidence, each marked on its event ({@link ViolationEvent#evidence()}) and each
 * target counted once per tool call, whichever kind saw it first:
 * <ul>
 *   <li>{@code command-text} (PreToolUse): the doors the command names ({@link CommandText});
 *   <li>{@code sandbox-record}: the {@code <sandbox_violations>} block Claude Code appends to a
 *       refused command's output, every deny shape srt writes;
 *   <li>{@code output}: the refusal words of the output: curl's transcript and errors (as the
 *       proxy-403 format reads them), the shell's file errors, wget's, Python's and Node's
 *       refused tunnels ({@link OutputWords}).
 * </ul>
 */
public final class ClaudeCodeParser implements LineParser {
  /** The action of a call's request to run outside the sandbox ({@code dangerouslyDisableSandbox}), from its PreToolUse. */
  public static final String SANDBOX_OFF_REQUEST = ViolationEvent.SANDBOX_OFF_REQUEST;
  /** The action of such a call whose output shows no mark of the sandbox: it may have run outside. */
  public static final String SANDBOX_OFF_UNANSWERED = ViolationEvent.SANDBOX_OFF_UNANSWERED;
  /** What the sandbox leaves in an output when it answered: its violations block, its proxy's refusal, its read-only mounts. */
  private static final Pattern SANDBOX_MARK = Pattern.compile(
      "<sandbox_violations>|X-Proxy-Error|CONNECT tunnel failed, response 40[37]|Read-only file system|Tunnel connection failed: 40[37]"
      + "|Proxy tunneling failed");

  /** How many tool calls' counted targets a file's parser remembers (a call's two records are near). */
  static final int REMEMBERED_CALLS = 256;
  static final int MAX_EVENTS_PER_RECORD = 64;

  private final Map<String, Set<String>> counted = new LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Set<String>> eldest) {
      return size() > REMEMBERED_CALLS;
    }
  };

  @Override
  public Parsed parse(SourceLine src) {
    JsonNode root;
    try {
      root = Json.MAPPER.readTree(src.text());
    } catch (JsonProcessingException e) {
      return Parsed.rejected(Rejection.UNPARSEABLE, "not a JSON object: " + Sanitize.text(e.getOriginalMessage(), 200));
    }
    if (root == null || !root.isObject()) {
      return Parsed.rejected(Rejection.UNPARSEABLE, "not a JSON object");
    }
    String hook = text(root, "hook_event_name");
    boolean pre = "PreToolUse".equals(hook);
    if (!pre && !"PostToolUse".equals(hook) && !"PostToolUseFailure".equals(hook)) {
      return hook == null ? Parsed.rejected(Rejection.UNPARSEABLE, "no hook_event_name: not a Claude Code hook record")
          : Parsed.skipped("other-hook");
    }
    if (!"Bash".equals(text(root, "tool_name"))) {
      return Parsed.skipped("other-tool");
    }
    String toolUseId = text(root, "tool_use_id");
    Attribution.Result who = Attribution.of(src.agentIdFromPath(), toolUseId, null, null);
    if (who instanceof Attribution.Refused r) {
      return Parsed.rejected(r.code(), r.reason() + " (the record's tool_use_id)");
    }
    String session = Attribution.grainId(text(root, "session_id"));
    String task = Attribution.grainId(text(root, "prompt_id"));
    JsonNode input = root.path("tool_input");
    String command = input.path("command").isTextual() ? input.path("command").asText() : null;
    String cwd = text(root, "cwd");
    Call call = new Call(src, (Attribution.Attributed) who, session, task,
        command == null ? null : Redactor.safe(command, Sanitize.MAX_COMMAND_CHARS),
        counted.computeIfAbsent(toolUseId, k -> new HashSet<>()));
    boolean offRequested = input.path("dangerouslyDisableSandbox").asBoolean(false);
    if (pre && offRequested) {
      call.add(ViolationEvent.EVIDENCE_COMMAND, "escape:request", b -> b.kind(Kind.PROCESS).action(SANDBOX_OFF_REQUEST)
          .reason("the call asks to run outside the sandbox (dangerouslyDisableSandbox)"));
    }
    if (pre) {
      for (CommandText.Target t : CommandText.scan(command)) {
        call.add(ViolationEvent.EVIDENCE_COMMAND, "net:" + t.host(), b -> b.kind(Kind.NETWORK).action(t.action())
            .host(t.host()).port(t.port()).url(t.url() == null ? null : Redactor.safe(t.url(), 1024))
            .addressClass(HostClassifier.classify(t.host()).orElse(null))
            .reason("the command " + t.why()));
      }
    } else {
      String output = outputOf(root);
      output(call, output, cwd);
      if (offRequested && !SANDBOX_MARK.matcher(output).find()) {
        // Claude Code ran it outside the sandbox (allowUnsandboxedCommands), or the sandbox had nothing to refuse
        call.add(ViolationEvent.EVIDENCE_OUTPUT, "escape:unanswered", b -> b.kind(Kind.PROCESS).action(SANDBOX_OFF_UNANSWERED)
            .reason("the call asked to run outside the sandbox, and nothing in its output shows the sandbox's hand:"
                + " it may have run outside"));
      }
    }
    return call.events.isEmpty() ? Parsed.skipped(pre ? "no-door" : "no-refusal") : new Parsed.Events(call.events);
  }

  /** What the command printed: the response's stdout and stderr, or the failure's error text. */
  private static String outputOf(JsonNode root) {
    JsonNode r = root.path("tool_response");
    if (r.isObject()) {
      return r.path("stdout").asText("") + "\n" + r.path("stderr").asText("");
    }
    if (r.isTextual()) {
      return r.asText();
    }
    return root.path("error").asText("");
  }

  private static void output(Call call, String output, String cwd) {
    CurlTranscriptParser curl = new CurlTranscriptParser();
    SourceLine src = call.src;
    String wgetUrl = null;
    for (String line : output.split("\n", -1)) {
      if (call.events.size() >= MAX_EVENTS_PER_RECORD) {
        break;
      }
      String l = line.endsWith("\r") ? line.substring(0, line.length() - 1) : line;
      SourceLine as = new SourceLine(src.file(), src.offset(), l, src.agentIdFromPath(), call.who.commandId(),
          src.ingestHost(), src.ingestedAt(), src.idName());
      Parsed p = l.isBlank() ? curl.blank(as) : curl.parse(as);
      if (p instanceof Parsed.Events ev) {
        for (ViolationEvent e : ev.events()) {
          call.adopt(e);
        }
        continue;
      }
      Optional<String> start = OutputWords.wgetStart(l);
      if (start.isPresent()) {
        wgetUrl = start.get();
        continue;
      }
      Optional<OutputWords.FileRefusal> f = OutputWords.file(l);
      if (f.isPresent()) {
        String raw = f.get().path();
        String path = raw.startsWith("~") ? raw : FsPaths.normalise(raw, cwd);
        call.add(ViolationEvent.EVIDENCE_OUTPUT, "fs:" + path, b -> b.kind(Kind.FILESYSTEM).action("open")
            .path(Sanitize.text(path, Sanitize.MAX_PATH_CHARS))
            .rawPath(raw.equals(path) ? null : Sanitize.text(raw, Sanitize.MAX_PATH_CHARS))
            .errno(f.get().errno()).reason(f.get().words()));
        continue;
      }
      String wget = wgetUrl;
      OutputWords.network(l, wget).ifPresent(n -> call.addTarget(n.target(), n.action(), n.reason()));
    }
    Parsed last = curl.end();
    if (last instanceof Parsed.Events ev) {
      ev.events().forEach(call::adopt);
    }
  }

  /** The events of one record, and the targets its tool call has counted. */
  private static final class Call {
    final SourceLine src;
    final Attribution.Attributed who;
    final String session;
    final String task;
    final String commandText;
    final Set<String> counted;
    final List<ViolationEvent> events = new ArrayList<>();

    Call(SourceLine src, Attribution.Attributed who, String session, String task, String commandText, Set<String> counted) {
      this.src = src;
      this.who = who;
      this.session = session;
      this.task = task;
      this.commandText = commandText;
      this.counted = counted;
    }

    /** An event curl's reader made of an output line: the sandbox's record when it came from the block. */
    void adopt(ViolationEvent e) {
      String evidence = SrtFormat.NAME.equals(e.source()) ? ViolationEvent.EVIDENCE_SANDBOX : ViolationEvent.EVIDENCE_OUTPUT;
      String key = e.kind() == Kind.FILESYSTEM ? "fs:" + e.path() : "net:" + (e.host() == null ? "?" : e.host());
      // the srt proxy user in curl's words is a per-session token here, not the command: the harness's id stands
      add(evidence, key, b -> copy(e, b));
    }

    void addTarget(String target, String action, String reason) {
      Optional<HostClassifier.HostPort> hp = target == null ? Optional.empty()
          : HostClassifier.target(target).filter(h -> ProxyWords.isHost(h.host()));
      add(ViolationEvent.EVIDENCE_OUTPUT, "net:" + hp.map(HostClassifier.HostPort::host).orElse("?"), b -> {
        b.kind(Kind.NETWORK).action(action).reason(Sanitize.text(reason, Sanitize.MAX_TEXT_CHARS));
        hp.ifPresentOrElse(h -> b.host(h.host()).port(h.port())
            .addressClass(HostClassifier.classify(h.host()).orElse(null)), () -> b.targetUnknown(true));
      });
    }

    void add(String evidence, String key, java.util.function.Consumer<ViolationEvent.Builder> fill) {
      // a refusal whose target is unknown says nothing more once the call has a known one
      if (key.equals("net:?") && counted.stream().anyMatch(k -> k.startsWith("net:"))) {
        return;
      }
      if (!counted.add(key)) {
        return;
      }
      if (!key.equals("net:?") && key.startsWith("net:") && counted.remove("net:?")) {
        events.removeIf(e -> Boolean.TRUE.equals(e.targetUnknown()));
      }
      ViolationEvent.Builder b = src.newEvent().eventId(EventIds.of(src.idName(), src.offset(), events.size()));
      fill.accept(b);
      events.add(who.applyTo(b).source(ClaudeCodeFormat.NAME).identityConflict(null).sessionId(session).taskId(task)
          .commandText(commandText).evidence(evidence).build());
    }

    private static void copy(ViolationEvent e, ViolationEvent.Builder b) {
      b.kind(e.kind()).action(e.action()).method(e.method()).host(e.host()).port(e.port()).url(e.url())
          .targetUnknown(e.targetUnknown()).path(e.path()).newPath(e.newPath()).addressClass(e.addressClass())
          .reason(e.reason()).proxyError(e.proxyError()).errno(e.errno()).syscall(e.syscall()).observedAt(e.observedAt());
    }
  }

  private static String text(JsonNode root, String field) {
    JsonNode n = root.get(field);
    return n != null && n.isTextual() ? n.asText() : null;
  }


}
