package dev.knockwatch.notify.slack;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.slack.api.Slack;
import com.slack.api.SlackConfig;
import com.slack.api.methods.MethodsClient;
import com.slack.api.methods.response.conversations.ConversationsHistoryResponse;
import com.slack.api.model.Message;
import com.slack.api.methods.SlackApiException;
import com.slack.api.methods.response.chat.ChatPostMessageResponse;
import com.slack.api.methods.response.chat.ChatUpdateResponse;
import com.slack.api.webhook.WebhookResponse;
import dev.knockwatch.notify.spi.Notification;
import dev.knockwatch.notify.spi.Notifier;
import dev.knockwatch.notify.spi.Secret;
import java.io.IOException;
import java.util.List;
import java.util.Map;

/**
 * Slack, through slack-api-client. With an incoming webhook every notification is a message.
 * With a bot token the first notification of an alert is {@code chat.postMessage}; later ones
 * {@code chat.update} that message (its ts is the notification's ref), and the resolution is
 * also a reply in its thread, so the channel shows one message per alert. Each message carries its
 * notification's idempotency key as metadata: after a crash between a post and its record, the
 * post is found in the channel's history by that key and updated, not posted again.
 */
public final class SlackNotifier implements Notifier {

  /** Every message a bot posts carries its notification's idempotency key as message metadata. */
  static final String METADATA_TYPE = "knockwatch_notification";
  static final String METADATA_KEY = "idempotency_key";

  private final SlackReceiver config;
  private final Slack slack;
  private final String publicUrl;

  public SlackNotifier(SlackReceiver config, String publicUrl) {
    this.config = config;
    SlackConfig sc = new SlackConfig();
    sc.setMethodsEndpointUrlPrefix(config.apiUrl());
    sc.setPrettyResponseLoggingEnabled(false);
    sc.setStatsEnabled(false); // else the SDK calls auth.test first, to label its own metrics
    sc.setHttpClientCallTimeoutMillis(10_000);
    this.slack = Slack.getInstance(sc);
    this.publicUrl = publicUrl;
  }

  @Override
  public String name() {
    return config.name();
  }

  @Override
  public Result notify(Notification n) {
    String json = SlackMessage.payload(n, publicUrl).toString();
    try {
      return config.webhookUrl() != null ? webhook(json) : bot(n);
    } catch (IOException e) {
      return Result.failed(true, masked(e.getClass().getSimpleName() + ": " + e.getMessage()));
    } catch (SlackApiException e) {
      int status = e.getResponse().code();
      return Result.ofStatus(status, e.getResponse().header("Retry-After"));
    }
  }

  private Result webhook(String json) throws IOException {
    WebhookResponse r = slack.send(config.webhookUrl().reveal(), json);
    return Result.ofStatus(r.getCode(), header(r.getHeaders(), "Retry-After"));
  }

  private Result bot(Notification n) throws IOException, SlackApiException {
    MethodsClient api = slack.methods(config.botToken().reveal());
    // no repeat mark: a message found is updated, and one not found was never posted
    ObjectNode payload = SlackMessage.payload(new Notification(n.receiver(), n.event(), n.key(), n.alerts(), n.ref()),
        publicUrl);
    String text = payload.get("text").asText();
    String blocks = payload.get("blocks").toString();
    String ref = n.ref();
    if (ref == null && n.possibleRepeat()) {
      // the last process may have posted it: find the message by the key it carries, and update it
      ref = posted(api, n.idempotencyKey());
    }
    if (ref == null) {
      ChatPostMessageResponse r = api.chatPostMessage(req -> req.channel(config.channel()).text(text).blocksAsString(blocks)
          .metadata(new Message.Metadata(METADATA_TYPE, Map.of(METADATA_KEY, n.idempotencyKey()))));
      return r.isOk() ? Result.ok(r.getTs()) : apiError(r.getError());
    }
    String ts = ref;
    ChatUpdateResponse u = api.chatUpdate(req -> req.channel(config.channel()).ts(ts).text(text).blocksAsString(blocks));
    if (!u.isOk()) {
      return apiError(u.getError());
    }
    if (n.event() == Notification.Event.RESOLVED) {
      ChatPostMessageResponse reply = api.chatPostMessage(req -> req.channel(config.channel()).threadTs(ts)
          .text(text));
      if (!reply.isOk()) {
        return apiError(reply.getError());
      }
    }
    return Result.ok(ts);
  }

  /** The ts of the channel's recent message that carries {@code key} in its metadata, or null. */
  private String posted(MethodsClient api, String key) throws IOException, SlackApiException {
    ConversationsHistoryResponse h = api.conversationsHistory(req -> req.channel(config.channel()).limit(200)
        .includeAllMetadata(true));
    if (!h.isOk() || h.getMessages() == null) {
      return null;
    }
    for (Message m : h.getMessages()) {
      if (m.getMetadata() != null && METADATA_TYPE.equals(m.getMetadata().getEventType())
          && m.getMetadata().getEventPayload() != null && key.equals(m.getMetadata().getEventPayload().get(METADATA_KEY))) {
        return m.getTs();
      }
    }
    return null;
  }

  /** Slack's error words (e.g. {@code channel_not_found}); {@code ratelimited} is worth another try. */
  private static Result apiError(String error) {
    return Result.failed("ratelimited".equals(error), "Slack said " + (error == null ? "not ok" : error));
  }

  private static String header(Map<String, List<String>> headers, String name) {
    if (headers == null) {
      return null;
    }
    return headers.entrySet().stream().filter(e -> e.getKey() != null && e.getKey().equalsIgnoreCase(name))
        .flatMap(e -> e.getValue().stream()).findFirst().orElse(null);
  }

  /** An I/O error's text may quote the URL: the webhook URL is the credential. */
  private String masked(String detail) {
    String out = detail == null ? "" : detail;
    if (config.webhookUrl() != null) {
      out = out.replace(config.webhookUrl().reveal(), dev.knockwatch.notify.spi.Secret.MASK);
    }
    if (config.botToken() != null) {
      out = out.replace(config.botToken().reveal(), dev.knockwatch.notify.spi.Secret.MASK);
    }
    return out;
  }
}
