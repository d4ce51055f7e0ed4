package dev.knockwatch.events;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Locale;

/** The class of address a refused destination resolved to, as the sandbox named it. */
public enum AddressClass {
  @JsonProperty("public") PUBLIC,
  @JsonProperty("private") PRIVATE,
  @JsonProperty("loopback") LOOPBACK,
  @JsonProperty("link-local") LINK_LOCAL,
  @JsonProperty("cloud-metadata") CLOUD_METADATA,
  @JsonProperty("unspecified") UNSPECIFIED,
  @JsonProperty("multicast") MULTICAST,
  @JsonProperty("broadcast") BROADCAST,
  @JsonProperty("unknown") UNKNOWN;

  /** The wire name, e.g. {@code link-local}. */
  public String wireName() {
    return name().toLowerCase(Locale.ROOT).replace('_', '-');
  }
}
