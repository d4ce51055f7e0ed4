package dev.knockwatch.notify.spi;

import java.time.Duration;

/**
 * One receiver of receivers.yaml, as its {@link ReceiverType} reads it: a record in the receiver
 * type's package ({@code slack/SlackReceiver}, ...). Secrets print as {@value Secret#MASK}.
 */
public interface Receiver {

  /** Its name, as routes and metrics use it. */
  String name();

  /** The least time between two of its messages (Slack takes about one a second per channel); zero for none. */
  default Duration minInterval() {
    return Duration.ZERO;
  }
}
