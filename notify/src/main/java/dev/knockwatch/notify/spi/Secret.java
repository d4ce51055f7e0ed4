package dev.knockwatch.notify.spi;

/**
 * A value that must never reach a log, an error message or a config dump: a webhook URL (it is
 * the credential), a bot token, a routing key, a signing secret. Only {@link #reveal()} gives
 * the value, for the one place that sends it.
 */
public final class Secret {

  public static final String MASK = "****";
  private final String value;

  public Secret(String value) {
    this.value = value;
  }

  public String reveal() {
    return value;
  }

  /** True when {@code text} holds the secret: for checks that nothing leaked. */
  public boolean isIn(String text) {
    return text != null && !value.isEmpty() && text.contains(value);
  }

  @Override
  public String toString() {
    return MASK;
  }
}
