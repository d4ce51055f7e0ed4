package dev.knockwatch.events;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;

/**
 * The web console's deep links, built in one place for every page that carries one (Slack,
 * PagerDuty, the webhook) and held to the form the Grafana drill-down writes by hand: the
 * console's address, then a fragment of {@code key=value} pairs ({@code #command=ID}), which never
 * reaches the server. The console also opens {@code #/commands/ID}, the form pages sent before.
 */
public final class ConsoleLink {

  /** The fragment that opens one command's timeline, before the percent-encoded id. */
  public static final String COMMAND = "#command=";

  private ConsoleLink() {}

  /** The link to {@code commandId}'s timeline in the console served at {@code consoleUrl}. */
  public static String command(String consoleUrl, String commandId) {
    return consoleUrl.replaceAll("/+$", "") + "/" + COMMAND + URLEncoder.encode(commandId, StandardCharsets.UTF_8);
  }
}
