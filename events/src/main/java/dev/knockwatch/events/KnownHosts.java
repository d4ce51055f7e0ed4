package dev.knockwatch.events;

import java.util.Set;

/**
 * Hosts known for what they let an agent do whatever its task: URL shorteners (a way around a host
 * allowlist) and paste, file-drop and request-catcher sites (a place to leave data for anyone).
 */
public final class KnownHosts {

  private KnownHosts() {}

  /** Well-known URL shorteners: a way around a host allowlist (the bypass detector's door, a command's text). */
  public static final Set<String> SHORTENERS = Set.of("bit.ly", "tinyurl.com", "t.co", "goo.gl", "is.gd", "ow.ly",
      "buff.ly", "rebrand.ly", "cutt.ly", "shorturl.at", "rb.gy", "tiny.cc", "t.ly", "v.gd");

  /**
   * Well-known paste and file-drop sites, and request catchers: a place to leave data for anyone,
   * so an exfiltration path whatever the task (never proposed for an allowlist).
   */
  public static final Set<String> PASTE_SITES = Set.of("pastebin.com", "paste.ee", "hastebin.com", "hastebin.skyra.pw",
      "dpaste.com", "dpaste.org", "paste.rs", "ix.io", "sprunge.us", "termbin.com", "0x0.st", "transfer.sh",
      "file.io", "temp.sh", "catbox.moe", "litterbox.catbox.moe", "gofile.io", "anonfiles.com", "wetransfer.com",
      "gist.githubusercontent.com", "ghostbin.com", "rentry.co", "justpaste.it", "controlc.com", "webhook.site",
      "requestbin.net", "pipedream.net", "oast.fun", "interact.sh", "ngrok.io", "ngrok-free.app", "trycloudflare.com");

  /** Whether {@code host} (canonical) is one of {@code sites} or a name below one. */
  public static boolean isOrUnder(String host, Set<String> sites) {
    if (host == null) {
      return false;
    }
    for (String h = host; ; ) {
      if (sites.contains(h)) {
        return true;
      }
      int dot = h.indexOf('.');
      if (dot < 0) {
        return false;
      }
      h = h.substring(dot + 1);
    }
  }
}
