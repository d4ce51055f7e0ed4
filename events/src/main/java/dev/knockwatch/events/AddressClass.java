package dev.knockwatch.events;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Locale;

/**
 * The class of address a refused destination resolved to, as the sandbox named it, or as its IP
 * literal reads (IANA's special-purpose registries). Beside IANA's classes, srt's own: an address
 * of the sandbox host's own interfaces ({@code this-host}: a service bound to 0.0.0.0 answers
 * there as on loopback), one the operator denied by IP ({@code deny-listed}: deniedDomains;
 * {@code listed}: deniedResolvedAddresses), and what a loopback name resolved to that was not
 * loopback ({@code non-loopback}).
 */
public enum AddressClass {
  @JsonProperty("public") PUBLIC,
  @JsonProperty("private") PRIVATE,
  @JsonProperty("loopback") LOOPBACK,
  @JsonProperty("link-local") LINK_LOCAL,
  @JsonProperty("cloud-metadata") CLOUD_METADATA,
  @JsonProperty("unspecified") UNSPECIFIED,
  @JsonProperty("multicast") MULTICAST,
  @JsonProperty("broadcast") BROADCAST,
  /** Shared address space (100.64.0.0/10, RFC 6598): a carrier's NAT, not the internet. */
  @JsonProperty("cgnat") CGNAT,
  /** Documentation (TEST-NET-1/2/3, 2001:db8::/32), benchmarking (198.18.0.0/15) and reserved (240.0.0.0/4) space: never a real destination. */
  @JsonProperty("reserved") RESERVED,
  @JsonProperty("this-host") THIS_HOST,
  @JsonProperty("deny-listed") DENY_LISTED,
  @JsonProperty("listed") LISTED,
  @JsonProperty("non-loopback") NON_LOOPBACK,
  @JsonProperty("unknown") UNKNOWN;

  /** The wire name, e.g. {@code link-local}. */
  public String wireName() {
    return name().toLowerCase(Locale.ROOT).replace('_', '-');
  }
}
