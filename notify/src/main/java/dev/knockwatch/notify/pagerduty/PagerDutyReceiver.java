package dev.knockwatch.notify.pagerduty;

import dev.knockwatch.notify.spi.Receiver;
import dev.knockwatch.notify.spi.Secret;
import java.net.URI;

/** PagerDuty Events API v2. */
public record PagerDutyReceiver(String name, Secret routingKey, URI url) implements Receiver {}
