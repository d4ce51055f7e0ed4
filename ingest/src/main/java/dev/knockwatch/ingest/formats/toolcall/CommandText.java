package dev.knockwatch.ingest.formats.toolcall;

import dev.knockwatch.events.AddressClass;
import dev.knockwatch.events.HostClassifier;
import dev.knockwatch.events.HostClassifier.HostPort;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a command's text says it will try, before it runs: the evidence that silenced output
 * ({@code 2>/dev/null}) cannot hide. Only the doors a refusal elsewhere would be judged by:
 * IP literals in every form ingest classifies (as a URL's host, {@code host:port}, or a bare
 * dotted address), cloud-metadata names, URL shorteners, and a target fetched around the proxy
 * ({@code --noproxy}, {@code NO_PROXY=*}) or through a SOCKS proxy ({@code --socks5},
 * {@code ALL_PROXY=socks5://}, {@code -x socks5h://}). An ordinary name is not evidence: the
 * sandbox's own record and the output tell whether it was refused.
 *
 * <p>The text is the model's (docs/TRUST.md): read with bounded patterns, its first
 * {@value #MAX_SCANNED} characters only, at most {@value #MAX_TARGETS} targets.
 */
public final class CommandText {

  static final int MAX_SCANNED = 16_384;
  static final int MAX_TARGETS = 16;

  private static final Pattern URL = Pattern.compile("(?d)\\b([A-Za-z][A-Za-z0-9+.-]{0,15})://([^\\s'\"/?#<>|;&)]{1,300})");
  private static final Pattern HOST_PORT = Pattern.compile(
      "(?d)(?<![\\w.:/@-])(\\[[0-9A-Fa-f:.]{2,45}\\]|[0-9A-Za-z.-]{1,253}):(\\d{1,5})(?![\\w.:])");
  private static final Pattern DOTTED = Pattern.compile("(?d)(?<![\\w.:/@-])(\\d{1,10}(?:\\.\\d{1,10}){1,3})(?![\\w.:])");
  private static final Pattern WORD = Pattern.compile("(?d)(?<![\\w.-])([a-z][a-z0-9.-]{2,252}[a-z])(?![\\w-])");
  private static final Pattern NO_PROXY = Pattern.compile("(?d)--noproxy\\b|\\bno_proxy=['\"]?\\*|\\bNO_PROXY=['\"]?\\*");
  private static final Pattern SOCKS = Pattern.compile(
      "(?d)--socks[45]h?\\b|--preproxy\\b|\\b(?:ALL_PROXY|all_proxy|HTTPS?_PROXY|https?_proxy)=['\"]?socks|-x\\s*['\"]?socks|--proxy\\s+['\"]?socks");

  /**
   * A target the text names. {@code action}: {@code dns} for one fetched around the proxy,
   * {@code socks-tunnel} through a SOCKS proxy, else {@code http-request}; {@code why} says which door.
   */
  public record Target(String host, Integer port, String url, String action, String why) {}

  private CommandText() {}

  public static List<Target> scan(String command) {
    if (command == null || command.isEmpty()) {
      return List.of();
    }
    String text = command.length() > MAX_SCANNED ? command.substring(0, MAX_SCANNED) : command;
    boolean noProxy = NO_PROXY.matcher(text).find();
    boolean socks = SOCKS.matcher(text).find();
    Map<String, Target> found = new LinkedHashMap<>();
    Matcher m = URL.matcher(text);
    while (m.find() && found.size() < MAX_TARGETS) {
      String scheme = m.group(1).toLowerCase(Locale.ROOT);
      if (scheme.startsWith("socks")) {
        continue; // the proxy itself, not a target
      }
      String url = scheme + "://" + m.group(2);
      Optional<HostPort> hp = HostClassifier.fromUrl(url);
      hp.ifPresent(h -> add(found, h, url, noProxy, socks, true));
    }
    m = HOST_PORT.matcher(text);
    while (m.find() && found.size() < MAX_TARGETS) {
      HostClassifier.hostPort(m.group(1) + ":" + m.group(2)).ifPresent(h -> add(found, h, null, noProxy, socks, false));
    }
    m = DOTTED.matcher(text);
    while (m.find() && found.size() < MAX_TARGETS) {
      String d = m.group(1);
      if (d.chars().filter(c -> c == '.').count() == 3) {
        add(found, new HostPort(HostClassifier.canonical(d), null), null, noProxy, socks, false);
      }
    }
    m = WORD.matcher(text);
    while (m.find() && found.size() < MAX_TARGETS) {
      String w = m.group(1);
      if (HostClassifier.classify(w).orElse(null) == AddressClass.CLOUD_METADATA && w.contains(".")) {
        add(found, new HostPort(w, null), null, noProxy, socks, false);
      }
    }
    return new ArrayList<>(found.values());
  }

  /** Keeps {@code h} when it is a door: an IP literal, a metadata name, a shortener, or any URL's host fetched around the proxy. */
  private static void add(Map<String, Target> found, HostPort h, String url, boolean noProxy, boolean socks,
      boolean isUrl) {
    String host = h.host();
    if (host == null || host.isEmpty() || found.containsKey(host)) {
      return;
    }
    Optional<AddressClass> cls = HostClassifier.classify(host);
    boolean literal = isIpLiteral(host);
    String why;
    if (cls.orElse(null) == AddressClass.CLOUD_METADATA) {
      why = "names the cloud metadata service " + host;
    } else if (literal) {
      why = "names the IP literal " + host;
    } else if (dev.knockwatch.events.KnownHosts.SHORTENERS.contains(host)) {
      why = "names the URL shortener " + host;
    } else if (isUrl && (noProxy || socks)) {
      why = null;
    } else {
      return; // an ordinary name: not evidence by itself
    }
    String action = isUrl && socks ? "socks-tunnel" : isUrl && noProxy ? "dns" : "http-request";
    if (why == null) {
      why = action.equals("dns") ? "fetches " + host + " around the proxy (--noproxy)"
          : "fetches " + host + " through a SOCKS proxy";
    } else if (!action.equals("http-request")) {
      why += action.equals("dns") ? ", around the proxy (--noproxy)" : ", through a SOCKS proxy";
    }
    found.put(host, new Target(host, h.port(), url, action, why));
  }

  static boolean isIpLiteral(String host) {
    return host.indexOf(':') >= 0 || host.chars().allMatch(c -> (c >= '0' && c <= '9') || c == '.');
  }
}
