package dev.knockwatch.ingest.config;

/** The ingest config is not usable; the message names the file, the source and the problem. */
public final class ConfigException extends RuntimeException {
  public ConfigException(String message) {
    super(message);
  }
}
