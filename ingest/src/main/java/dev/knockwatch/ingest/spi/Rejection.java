package dev.knockwatch.ingest.spi;

import dev.knockwatch.events.CommandId;
import java.util.Locale;

/**
 * Why a line was rejected, as a fixed word (the rejected record's {@code code} and a metric
 * label); the readable reason travels beside it.
 */
public enum Rejection {
  /** Not the format the source is read as (bad JSON, no deny line, a port out of range ...). */
  UNPARSEABLE,
  MISSING_COMMAND_ID,
  /** Fewer than {@value CommandId#MIN_LENGTH} characters. */
  SHORT_COMMAND_ID,
  /** Too long, characters outside the id alphabet, or an encoding that does not decode to an id. */
  BAD_COMMAND_ID,
  /** The directory that names the agent is no agent id (docs/TRUST.md): a path, markup, too long ... */
  BAD_AGENT_ID,
  /** A refusal whose target names no host (a URL path, {@code *}): never taken for one. */
  BAD_TARGET,
  LINE_TOO_LONG,
  /** NUL bytes or mostly control characters: not a log line. */
  BINARY,
  /** The format's parser failed on it (a bug the line met): kept with the parser's error. */
  PARSER_ERROR,
  /** Its event could not be written, or Kafka refused its record for itself (never for an outage). */
  UNPUBLISHABLE,
  /** A raw-topic record that is no raw line (docs/FORMATS.md "Raw lines from your shipper"): not JSON, no line, no path. */
  RAW_RECORD,
  /** A raw line whose path is not under the layout's root: never attributed (docs/TRUST.md). */
  OUTSIDE_LAYOUT,
  /** A refusal of a wall that names no command, whose identity (a UID, an address) the source maps to no agent. */
  UNMAPPED_IDENTITY;

  public String code() {
    return name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  /** The code for a command id that failed validation. */
  public static Rejection forCommandId(String candidate) {
    if (candidate == null || candidate.isEmpty()) {
      return MISSING_COMMAND_ID;
    }
    return candidate.length() < CommandId.MIN_LENGTH ? SHORT_COMMAND_ID : BAD_COMMAND_ID;
  }
}
