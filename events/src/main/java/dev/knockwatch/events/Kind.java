package dev.knockwatch.events;

import com.fasterxml.jackson.annotation.JsonProperty;

/** What the refused operation touched. */
public enum Kind {
  @JsonProperty("network") NETWORK,
  @JsonProperty("filesystem") FILESYSTEM,
  @JsonProperty("unix-socket") UNIX_SOCKET,
  @JsonProperty("process") PROCESS
}
