package dev.knockwatch.ingest.formats.toolcall;

import dev.knockwatch.events.FsPaths;
import dev.knockwatch.events.HostClassifier;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Redactor;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.formats.proxy.CurlTranscriptParser;
import dev.knockwatch.ingest.formats.proxy.ProxyWords;
import dev.knockwatch.ingest.formats.srt.SrtFormat;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.SourceLine;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import java.util.regex.Pattern;

/**
 * The events of one tool call of an agent's harness (a Claude Code Bash call, a Codex
 * {@code exec_command}), from whatever evidence one of its records holds: the doors its command
 * text names ({@link CommandText}), the sandbox's record in its output ({@code <sandbox_violations>}),
 * and the output's refusal words (curl's transcript as the proxy-403 format reads it,
 * {@link OutputWords}). Each target counts once per call, whichever evidence saw it first; the
 * call's {@code counted} targets outlive one record (a call's start and end are two records).
 *
 * <p>Everything read here is agent-written (docs/TRUST.md): the command is the model's, the output
 * the command's. It can add refusals to its own call, never take one away or name another call.
 */
public final class ToolCall {

  /** What the sandbox leaves in an output when it answered: its violations block, its proxy's refusal, its read-only mounts. */
  public static final Pattern SANDBOX_MARK = Pattern.compile(
      "<sandbox_violations>|X-Proxy-Error|CONNECT tunnel failed, response 40[37]|Read-only file system"
      + "|Tunnel connection failed: 40[37]|Proxy tunneling failed|Network access to \"[^\"\\n]{1,300}\" was blocked");
  /** At most this many events of one record. */
  public static final int MAX_EVENTS_PER_RECORD = 64;

  /** How an event of the call gets its id: from its target's key ({@code net:host}, {@code fs:/p}) and its index in the record. */
  @FunctionalInterface
  public interface Ids {
    String of(String key, int index);

    /**
     * Ids of what an event is about, never where it was read: the harness, agent, session and call
     * (its {@code call} here), then the target's key. The same refusal read from a harness's
     * several records (a hook's, its telemetry's, its transcript's) is one id, which detection
     * counts once.
     */
    static Ids of(String harness, String agent, String session, String call) {
      String prefix = harness + "/" + (agent == null ? "-" : agent) + "/" + (session == null ? "-" : session) + "/" + call
          + "/";
      return (key, index) -> dev.knockwatch.ingest.spi.EventIds.of(prefix + key, 0, 0);
    }
  }

  private final SourceLine src;
  private final String commandId;
  private final Consumer<ViolationEvent.Builder> base;
  private final Set<String> counted;
  private final Ids ids;
  private final List<ViolationEvent> events = new ArrayList<>();

  /**
   * @param commandId the call's command id
   * @param base what every event of the call carries (agent, command, session, task, source, command text)
   * @param counted the targets the call has counted so far, kept by the caller from record to record
   */
  public ToolCall(SourceLine src, String commandId, Consumer<ViolationEvent.Builder> base, Set<String> counted,
      Ids ids) {
    this.src = src;
    this.commandId = commandId;
    this.base = base;
    this.counted = counted;
    this.ids = ids;
  }

  public List<ViolationEvent> events() {
    return events;
  }

  /** The doors the command's text names. */
  public void commandText(String command) {
    for (CommandText.Target t : CommandText.scan(command)) {
      add(ViolationEvent.EVIDENCE_COMMAND, "net:" + t.host(), b -> b.kind(Kind.NETWORK).action(t.action())
          .host(t.host()).port(t.port()).url(t.url() == null ? null : Redactor.safe(t.url(), 1024))
          .addressClass(HostClassifier.classify(t.host()).orElse(null))
          .reason("the command " + t.why()));
    }
  }

  /** The refusals the output tells: the sandbox's block, curl's transcript and errors, the other refusal words. */
  public void output(String output, String cwd) {
    CurlTranscriptParser curl = new CurlTranscriptParser();
    String wgetUrl = null;
    for (String line : output.split("\n", -1)) {
      if (events.size() >= MAX_EVENTS_PER_RECORD) {
        break;
      }
      String l = line.endsWith("\r") ? line.substring(0, line.length() - 1) : line;
      SourceLine as = new SourceLine(src.file(), src.offset(), l, src.agentIdFromPath(), commandId,
          src.ingestHost(), src.ingestedAt(), src.idName());
      Parsed p = l.isBlank() ? curl.blank(as) : curl.parse(as);
      if (p instanceof Parsed.Events ev) {
        ev.events().forEach(this::adopt);
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
        add(ViolationEvent.EVIDENCE_OUTPUT, "fs:" + path, b -> b.kind(Kind.FILESYSTEM).action("open")
            .path(Sanitize.text(path, Sanitize.MAX_PATH_CHARS))
            .rawPath(raw.equals(path) ? null : Sanitize.text(raw, Sanitize.MAX_PATH_CHARS))
            .errno(f.get().errno()).reason(f.get().words()));
        continue;
      }
      String wget = wgetUrl;
      OutputWords.network(l, wget).ifPresent(n -> target(ViolationEvent.EVIDENCE_OUTPUT, n.target(), n.action(),
          n.reason(), null));
    }
    Parsed last = curl.end();
    if (last instanceof Parsed.Events ev) {
      ev.events().forEach(this::adopt);
    }
  }

  /** An event curl's reader made of an output line: the sandbox's record when it came from the block. */
  private void adopt(ViolationEvent e) {
    String evidence = SrtFormat.NAME.equals(e.source()) ? ViolationEvent.EVIDENCE_SANDBOX : ViolationEvent.EVIDENCE_OUTPUT;
    String key = e.kind() == Kind.FILESYSTEM ? "fs:" + e.path() : "net:" + (e.host() == null ? "?" : e.host());
    // the srt proxy user in curl's words is a per-session token here, not the command: the harness's id stands
    add(evidence, key, b -> b.kind(e.kind()).action(e.action()).method(e.method()).host(e.host()).port(e.port())
        .url(e.url()).targetUnknown(e.targetUnknown()).path(e.path()).newPath(e.newPath())
        .addressClass(e.addressClass()).reason(e.reason()).proxyError(e.proxyError()).errno(e.errno())
        .syscall(e.syscall()).observedAt(e.observedAt()));
  }

  /**
   * A network refusal of {@code target} (host, host:port or URL; null: unknown), with more of it
   * filled by {@code more} (null: nothing more).
   */
  public void target(String evidence, String target, String action, String reason, Consumer<ViolationEvent.Builder> more) {
    Optional<HostClassifier.HostPort> hp = target == null ? Optional.empty()
        : HostClassifier.target(target).filter(h -> ProxyWords.isHost(h.host()));
    add(evidence, "net:" + hp.map(HostClassifier.HostPort::host).orElse("?"), b -> {
      b.kind(Kind.NETWORK).action(action).reason(Sanitize.text(reason, Sanitize.MAX_TEXT_CHARS));
      hp.ifPresentOrElse(h -> b.host(h.host()).port(h.port())
          .addressClass(HostClassifier.classify(h.host()).orElse(null)), () -> b.targetUnknown(true));
      if (more != null) {
        more.accept(b);
      }
    });
  }

  /**
   * One event of the call, unless its target is counted already: {@code key} names the target
   * ({@code net:host}, {@code fs:/path}, {@code escape:request}); {@code net:?} is a network refusal
   * whose target is unknown, which says nothing more once the call has a known one.
   */
  public void add(String evidence, String key, Consumer<ViolationEvent.Builder> fill) {
    if (key.equals("net:?") && counted.stream().anyMatch(k -> k.startsWith("net:"))) {
      return;
    }
    if (!counted.add(key)) {
      return;
    }
    if (!key.equals("net:?") && key.startsWith("net:") && counted.remove("net:?")) {
      events.removeIf(e -> Boolean.TRUE.equals(e.targetUnknown()));
    }
    ViolationEvent.Builder b = src.newEvent().eventId(ids.of(key, events.size()));
    fill.accept(b);
    base.accept(b);
    events.add(b.evidence(evidence).build());
  }
}
