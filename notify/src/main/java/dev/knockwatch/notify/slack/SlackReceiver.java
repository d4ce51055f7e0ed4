package dev.knockwatch.notify.slack;

import dev.knockwatch.notify.spi.Receiver;
import dev.knockwatch.notify.spi.Secret;
import java.time.Duration;

/**
 * Slack: an incoming webhook, or a bot token and a channel (chat.postMessage, then chat.update
 * and a thread reply). {@code apiUrl} is the Web API's URL prefix (a local server in tests);
 * {@code minInterval} spaces messages (Slack allows about one a second per channel).
 */
public record SlackReceiver(String name, Secret webhookUrl, Secret botToken, String channel, String apiUrl,
    Duration minInterval) implements Receiver {}
