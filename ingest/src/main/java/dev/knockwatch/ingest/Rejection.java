package dev.knockwatch.ingest;

import java.util.Locale;

/** Why a line was rejected, as a fixed word fit for a metric label; the readable reason travels beside it. */
public enum Rejection {
  NOT_JSON,
  BAD_RECORD,
  UNRECOGNISED_LINE,
  INVALID_COMMAND_ID,
  BAD_PORT,
  LINE_TOO_LONG;

  public String code() {
    return name().toLowerCase(Locale.ROOT).replace('_', '-');
  }
}
