package dev.knockwatch.events;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.time.Instant;

/**
 * One refusal: schema version 1 of the value on {@code knockwatch.violations}.
 *
 * <p>Every string field except {@code eventId} came, directly or not, from the sandboxed agent:
 * the ingest agent sanitizes and redacts them before they are built into an event, and every
 * consumer still escapes them for the place it shows them. Fields are absent when unknown.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ViolationEvent(
    int schema,
    String eventId,
    String commandId,
    String agentId,
    String role,
    String source,
    Kind kind,
    String action,
    String host,
    Integer port,
    String method,
    String url,
    Boolean targetUnknown,
    String path,
    String newPath,
    String rawPath,
    String rawNewPath,
    AddressClass addressClass,
    String reason,
    String proxyError,
    String errno,
    String syscall,
    Integer pid,
    Instant observedAt,
    Instant ingestedAt,
    String timeSource,
    String commandText,
    Origin origin,
    ProbeResult probe,
    IdentityClaim identityConflict,
    Unattributed unattributed,
    String sessionId,
    String taskId,
    String evidence,
    Boolean commandUnknown,
    Subject subject,
    String protocol,
    String sourceAddress,
    Integer sourcePort,
    Boolean enforced,
    String producer) {

  public static final int SCHEMA = 1;

  /**
   * {@code evidence}: what a harness's refusal was read from, where one harness record carries
   * several kinds (a Claude Code tool call): the sandbox's own record ({@value}, the
   * {@code <sandbox_violations>} block), the words of the command's output ({@link #EVIDENCE_OUTPUT}),
   * or the command's text before it ran ({@link #EVIDENCE_COMMAND}). Absent for other sources.
   */
  public static final String EVIDENCE_SANDBOX = "sandbox-record";

  /**
   * Not refusals but a harness's record of the sandbox itself (kind {@code process}): a call that
   * asked to run outside it (Claude Code's {@code dangerouslyDisableSandbox}, Codex's
   * {@code require_escalated}: {@value}); the same call's end when nothing in its output shows the
   * sandbox answered for it ({@link #SANDBOX_OFF_UNANSWERED}); such a request approved, so that the
   * call ran outside ({@link #SANDBOX_OFF_APPROVED}, who approved in the reason); and a sandbox that
   * could not start at all ({@link #SANDBOX_UNAVAILABLE}). Only the {@code sandbox-escape} and
   * {@code sandbox-unavailable} rules read them.
   */
  public static final String SANDBOX_OFF_REQUEST = "sandbox-off-request";
  public static final String SANDBOX_OFF_UNANSWERED = "sandbox-off-unanswered";
  public static final String SANDBOX_OFF_APPROVED = "sandbox-off-approved";
  public static final String SANDBOX_UNAVAILABLE = "sandbox-unavailable";

  /** Whether this is such a record of the sandbox itself, not a refusal. */
  public boolean sandboxOff() {
    return kind == Kind.PROCESS && (SANDBOX_OFF_REQUEST.equals(action) || SANDBOX_OFF_UNANSWERED.equals(action)
        || SANDBOX_OFF_APPROVED.equals(action) || SANDBOX_UNAVAILABLE.equals(action));
  }

  /**
   * {@code enforced: false}: what a wall in its audit or report mode let through that its policy
   * would have refused (Hubble's {@code AUDIT} verdict, smokescreen's {@code report} role, Docker
   * Sandboxes' audit enforcement). No refusal: only the {@code drift} rules read it. Absent for a
   * refusal, which the wall enforced.
   */
  public boolean unenforced() {
    return Boolean.FALSE.equals(enforced);
  }
  /*
   * {@code producer}: a wall's own record where it writes a standard one (an OCSF producer's event,
   * as JSON text), made safe and bounded by ingest, so that an export gives back every field the
   * producer wrote. Absent for other sources.
   */
  public static final String EVIDENCE_OUTPUT = "output";
  public static final String EVIDENCE_COMMAND = "command-text";

  /**
   * {@code timeSource} when {@code observedAt} is not the line's own time (the line had none, or
   * one that was unreadable, out of range, or too far ahead of the ingest clock): when ingest read
   * the line ({@value}), the file's modification time ({@link #TIME_FROM_FILE}, replay), or the
   * nearest timed refusal of the same command ({@link #TIME_FROM_COMMAND}, replay). Absent when it
   * is the line's own.
   */
  public static final String TIME_FROM_INGEST = "ingest";
  public static final String TIME_FROM_FILE = "file";
  public static final String TIME_FROM_COMMAND = "command";

  /** Where the line came from: the file (relative to the watched root), its byte offset, and the ingest host. */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record Origin(String file, long offset, String ingestHost) {}

  /**
   * The outcome of a guard probe (source {@code probe}): a command that must be refused, what was
   * expected, what was seen. Not a refusal itself: no detector but {@code wall-breach} reads it.
   */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record ProbeResult(String name, String expected, String observed, boolean refused) {}

  /**
   * What a line claimed about whose refusal it is, where that disagrees with the trusted log
   * layout (docs/TRUST.md): the claimed agentId and/or commandId, each absent when it agreed.
   * The event itself carries the layout's identity; the claim is agent-written text.
   */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record IdentityClaim(String agentId, String commandId) {}

  /**
   * A refusal ingest read but could not attribute (docs/TRUST.md): its directory is no agent id,
   * or its command id is missing or bad. The line itself went to {@code knockwatch.violations.rejected};
   * this event, keyed by {@link #unattributedCommandId} of its directory, tells detection it
   * happened, so that the {@code ingest-rejects} rule pages once per directory and episode. No other
   * rule reads it. {@code code} is the rejection's, {@code directory} the layout's (agent-written
   * text when the harness was careless: bounded and made safe).
   */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record Unattributed(String code, String directory, String identity) {

    public Unattributed(String code, String directory) {
      this(code, directory, null);
    }
  }

  /**
   * Who a wall that names no command refused, in its own terms, as the source config matched it to
   * the agent (docs/TRUST.md): the wall ({@code netfilter}) and the identity it trusts
   * ({@code uid=65534}, {@code src=10.0.3.7}). Such an event carries {@code commandUnknown: true}
   * and no command id: none is ever invented.
   */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  public record Subject(String wall, String identity) {}

  /** The key the event travels and is counted under ({@link EventKey#of}). */
  public String key() {
    return EventKey.of(this);
  }

  /** The command id the notices of one log directory's rejected refusals share: one alert per directory. */
  public static String unattributedCommandId(String directory) {
    return "ingest-rejects." + Hashes.sha256Hex(directory == null ? "" : directory, 8);
  }

  public static Builder builder() {
    return new Builder();
  }

  public Builder toBuilder() {
    Builder b = new Builder();
    b.eventId = eventId;
    b.commandId = commandId;
    b.agentId = agentId;
    b.role = role;
    b.source = source;
    b.kind = kind;
    b.action = action;
    b.host = host;
    b.port = port;
    b.method = method;
    b.url = url;
    b.targetUnknown = targetUnknown;
    b.path = path;
    b.newPath = newPath;
    b.rawPath = rawPath;
    b.rawNewPath = rawNewPath;
    b.addressClass = addressClass;
    b.reason = reason;
    b.proxyError = proxyError;
    b.errno = errno;
    b.syscall = syscall;
    b.pid = pid;
    b.observedAt = observedAt;
    b.ingestedAt = ingestedAt;
    b.timeSource = timeSource;
    b.commandText = commandText;
    b.origin = origin;
    b.probe = probe;
    b.identityConflict = identityConflict;
    b.unattributed = unattributed;
    b.sessionId = sessionId;
    b.taskId = taskId;
    b.evidence = evidence;
    b.commandUnknown = commandUnknown;
    b.subject = subject;
    b.protocol = protocol;
    b.sourceAddress = sourceAddress;
    b.sourcePort = sourcePort;
    b.enforced = enforced;
    b.producer = producer;
    return b;
  }

  /** Parsers fill what their format carries; the rest stays absent. */
  public static final class Builder {
    private String eventId;
    private String commandId;
    private String agentId;
    private String role;
    private String source;
    private Kind kind;
    private String action;
    private String host;
    private Integer port;
    private String method;
    private String url;
    private Boolean targetUnknown;
    private String path;
    private String newPath;
    private String rawPath;
    private String rawNewPath;
    private AddressClass addressClass;
    private String reason;
    private String proxyError;
    private String errno;
    private String syscall;
    private Integer pid;
    private Instant observedAt;
    private Instant ingestedAt;
    private String timeSource;
    private String commandText;
    private Origin origin;
    private ProbeResult probe;
    private IdentityClaim identityConflict;
    private Unattributed unattributed;
    private String sessionId;
    private String taskId;
    private String evidence;
    private Boolean commandUnknown;
    private Subject subject;
    private String protocol;
    private String sourceAddress;
    private Integer sourcePort;
    private Boolean enforced;
    private String producer;

    public Builder eventId(String v) { eventId = v; return this; }
    public Builder commandId(String v) { commandId = v; return this; }
    public Builder agentId(String v) { agentId = v; return this; }
    public Builder role(String v) { role = v; return this; }
    public Builder source(String v) { source = v; return this; }
    public Builder kind(Kind v) { kind = v; return this; }
    public Builder action(String v) { action = v; return this; }
    public Builder host(String v) { host = v; return this; }
    public Builder port(Integer v) { port = v; return this; }
    public Builder method(String v) { method = v; return this; }
    public Builder url(String v) { url = v; return this; }
    /** True when a refusal named no target (a raw proxy answer with no request line): the host is unknown, not absent. */
    public Builder targetUnknown(Boolean v) { targetUnknown = v; return this; }
    public Builder path(String v) { path = v; return this; }
    public Builder newPath(String v) { newPath = v; return this; }
    public Builder rawPath(String v) { rawPath = v; return this; }
    public Builder rawNewPath(String v) { rawNewPath = v; return this; }
    public Builder addressClass(AddressClass v) { addressClass = v; return this; }
    public Builder reason(String v) { reason = v; return this; }
    public Builder proxyError(String v) { proxyError = v; return this; }
    public Builder errno(String v) { errno = v; return this; }
    public Builder syscall(String v) { syscall = v; return this; }
    public Builder pid(Integer v) { pid = v; return this; }
    public Builder observedAt(Instant v) { observedAt = v; return this; }
    public Builder ingestedAt(Instant v) { ingestedAt = v; return this; }
    public Builder timeSource(String v) { timeSource = v; return this; }
    public Builder commandText(String v) { commandText = v; return this; }
    public Builder origin(Origin v) { origin = v; return this; }
    public Builder probe(ProbeResult v) { probe = v; return this; }
    public Builder identityConflict(IdentityClaim v) { identityConflict = v; return this; }
    public Builder unattributed(Unattributed v) { unattributed = v; return this; }
    /** The harness session the command ran in (Claude Code's {@code session_id}). */
    public Builder sessionId(String v) { sessionId = v; return this; }
    /** The task within the session: one user prompt (Claude Code's {@code prompt_id}). */
    public Builder taskId(String v) { taskId = v; return this; }
    public Builder evidence(String v) { evidence = v; return this; }
    /** True when the refusal's wall names no command (a firewall, a proxy of many clients): the event has no command id. */
    public Builder commandUnknown(Boolean v) { commandUnknown = v; return this; }
    public Builder subject(Subject v) { subject = v; return this; }
    /** The packet's protocol ({@code tcp}, {@code udp}, {@code icmp}), where the wall refused a packet. */
    public Builder protocol(String v) { protocol = v; return this; }
    /** The refused packet's source address, canonical as {@code host} is. */
    public Builder sourceAddress(String v) { sourceAddress = v; return this; }
    public Builder sourcePort(Integer v) { sourcePort = v; return this; }
    public Builder enforced(Boolean v) { enforced = v; return this; }
    public Builder producer(String v) { producer = v; return this; }

    public ViolationEvent build() {
      return new ViolationEvent(SCHEMA, eventId, commandId, agentId, role, source, kind, action,
          host, port, method, url, targetUnknown, path, newPath, rawPath, rawNewPath, addressClass, reason, proxyError, errno, syscall, pid,
          observedAt, ingestedAt, timeSource, commandText, origin, probe, identityConflict, unattributed,
          sessionId, taskId, evidence, commandUnknown, subject, protocol, sourceAddress, sourcePort, enforced, producer);
    }
  }
}
