package dev.knockwatch.events;

import com.fasterxml.jackson.annotation.JsonProperty;

/** Which kind of log a refusal was read from. */
public enum Source {
  @JsonProperty("srt-violation") SRT_VIOLATION,
  @JsonProperty("proxy-403") PROXY_403,
  @JsonProperty("squid") SQUID,
  @JsonProperty("strace") STRACE,
  @JsonProperty("json") JSON,
  /** Claude Code's hooks: one record per Bash tool call's start and end (ingest's claude-code format). */
  @JsonProperty("claude-code") CLAUDE_CODE,
  /** A guard probe's result (see {@link ViolationEvent.ProbeResult}), not a refusal. */
  @JsonProperty("probe-result") PROBE_RESULT;

  private final String wireName = name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');

  /** The wire name, e.g. {@code srt-violation}. */
  public String wireName() {
    return wireName;
  }
}
