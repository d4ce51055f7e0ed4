package dev.knockwatch.ingest.formats.proxy;

import dev.knockwatch.ingest.spi.SourceLine;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Locale;

/** What the words a client printed of a refusal mean: targets, status phrases, SOCKS codes, times. */
public final class ProxyWords {

  private static final DateTimeFormatter SOCAT_TIME = DateTimeFormatter.ofPattern("yyyy/MM/dd HH:mm:ss");

  private ProxyWords() {}

  /** Whether a status phrase names only its status ("Forbidden"), not the proxy's reason. */
  static boolean isGeneric(String phrase) {
    return GENERIC_PHRASES.contains(phrase.toLowerCase(Locale.ROOT));
  }

  /** A request target that is a path ({@code /x}) or {@code *}, not {@code host:port} or a URL. */
  static boolean isOriginForm(String target) {
    return target.startsWith("/") || target.equals("*");
  }

  /** What a host can be: no path, query, user, wildcard, quote or space in it (a URL path is never taken for one). */
  public static boolean isHost(String host) {
    if (host == null || host.isEmpty()) {
      return false;
    }
    for (int i = 0; i < host.length(); i++) {
      if ("/?#\\*@\"'<>` \t".indexOf(host.charAt(i)) >= 0) {
        return false;
      }
    }
    return true;
  }

  /** Status phrases that say nothing but the status. */
  private static final java.util.Set<String> GENERIC_PHRASES = java.util.Set.of("forbidden", "bad request",
      "method not allowed", "misdirected request", "service unavailable", "proxy authentication required");

  static String socksReason(String code) {
    return switch (code) {
      case "1" -> "SOCKS5 general failure";
      case "2" -> "SOCKS5 connection not allowed by ruleset";
      case "3" -> "SOCKS5 network unreachable";
      case "4" -> "SOCKS5 host unreachable";
      case "5" -> "SOCKS5 connection refused";
      default -> "SOCKS5 reply " + code;
    };
  }

  static Instant socatTime(String text) {
    try {
      return LocalDateTime.parse(text, SOCAT_TIME).toInstant(ZoneOffset.UTC);
    } catch (DateTimeParseException e) {
      return SourceLine.UNREADABLE_TIME;
    }
  }

  static Instant date(String rfc1123) {
    if (rfc1123 == null) {
      return null;
    }
    try {
      return ZonedDateTime.parse(rfc1123, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
    } catch (DateTimeParseException e) {
      return SourceLine.UNREADABLE_TIME;
    }
  }
}
