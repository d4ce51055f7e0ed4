package dev.knockwatch.notify.slack;

import dev.knockwatch.events.Durations;
import dev.knockwatch.events.config.Key;
import dev.knockwatch.notify.spi.Notifier;
import dev.knockwatch.notify.spi.ReceiverType;
import dev.knockwatch.notify.spi.ReceiverValues;
import dev.knockwatch.notify.spi.Secret;
import java.time.Duration;
import java.util.List;

/** {@code type: slack}: {@link SlackReceiver}, sent by {@link SlackNotifier}. */
public final class SlackReceiverType implements ReceiverType<SlackReceiver> {

  /** Slack's Web API, the prefix of every method's URL. */
  public static final String API = "https://slack.com/api/";

  static final Key<String> WEBHOOK_URL = ReceiverValues.secretKey("webhookUrl",
      "an incoming webhook's URL (the URL is the credential): one message per notification");
  static final Key<String> WEBHOOK_URL_FILE = ReceiverValues.fileOf(WEBHOOK_URL);
  static final Key<String> BOT_TOKEN = ReceiverValues.secretKey("botToken",
      "a bot token, with a channel: an alert's first notification is posted, later ones update it");
  static final Key<String> BOT_TOKEN_FILE = ReceiverValues.fileOf(BOT_TOKEN);
  static final Key<String> CHANNEL = ReceiverValues.text("channel", "channel", null, "where the bot posts");
  static final Key<String> API_URL = ReceiverValues.text("apiUrl", "URL", API, "the Web API's URL prefix");
  static final Key<Duration> MIN_INTERVAL = Key.duration("minInterval", Duration.ofSeconds(1), true,
      "the least time between two messages (Slack takes about one a second per channel)");

  @Override
  public String name() {
    return "slack";
  }

  @Override
  public String doc() {
    return "Slack, by an incoming webhook, or by a bot token that posts one message per alert, updates it, and"
        + " replies in its thread when it resolves";
  }

  @Override
  public Class<SlackReceiver> receiverClass() {
    return SlackReceiver.class;
  }

  @Override
  public List<Key<?>> keys() {
    return List.of(WEBHOOK_URL, WEBHOOK_URL_FILE, BOT_TOKEN, BOT_TOKEN_FILE, CHANNEL, API_URL, MIN_INTERVAL);
  }

  @Override
  public SlackReceiver receiver(String name, ReceiverValues v) {
    Secret webhook = v.secret(WEBHOOK_URL, WEBHOOK_URL_FILE);
    Secret token = v.secret(BOT_TOKEN, BOT_TOKEN_FILE);
    String channel = v.string(CHANNEL);
    if (v.hasProblems()) {
      // a value that did not expand or read is already named; "give one of" would only repeat it
    } else if ((webhook == null) == (token == null)) {
      v.problem("give webhookUrl, or botToken and channel (one of the two)");
    } else if (token != null && channel == null) {
      v.problem("botToken needs a channel");
    }
    String api = v.string(API_URL);
    return new SlackReceiver(name, webhook, token, channel, api != null && !api.endsWith("/") ? api + "/" : api,
        v.get(MIN_INTERVAL));
  }

  @Override
  public String describe(SlackReceiver s) {
    return "slack " + (s.webhookUrl() != null ? "webhook " + s.webhookUrl()
        : "bot token " + s.botToken() + " to " + s.channel() + " via " + s.apiUrl())
        + ", one message every " + Durations.format(s.minInterval()) + " at most";
  }

  @Override
  public Notifier notifier(SlackReceiver receiver, Context context) {
    return new SlackNotifier(receiver, context.publicUrl());
  }
}
