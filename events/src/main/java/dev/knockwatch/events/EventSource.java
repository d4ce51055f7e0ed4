package dev.knockwatch.events;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A kind of log refusals are read from, as every part of knockwatch knows it: its wire name (an
 * event's {@code source}, {@code parse --type}, a rule's {@code match.source}), a line on what it
 * is, and how its events leave for a SIEM where they differ from the common mapping. Ingest's
 * source formats are these ({@code ingest/spi/SourceFormat}); {@link EventSources} finds them.
 */
public interface EventSource {

  /** {@code srt-violation}, {@code squid}, {@code netfilter}: lower-case letters, digits and hyphens. */
  String wireName();

  /** What the source is, in one line. */
  String summary();

  /**
   * Adds to (or changes) {@code record}, the OCSF record the common mapping made of {@code e}, what
   * this source knows that the common mapping does not map. Pure; {@code e} is as ingest made it safe.
   */
  default void ocsf(ViolationEvent e, ObjectNode record) {}

  /** As {@link #ocsf}, for the ECS document the common mapping made of {@code e}. */
  default void ecs(ViolationEvent e, ObjectNode document) {}
}
