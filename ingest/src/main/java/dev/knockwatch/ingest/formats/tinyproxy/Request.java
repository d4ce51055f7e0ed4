package dev.knockwatch.ingest.formats.tinyproxy;

/**
 * What a connection asked for, as tinyproxy read it from the request line it logged
 * ({@code Request (file descriptor N): METHOD URL PROTOCOL}), or as its transparent mode rebuilt it
 * from the {@code Host} header ({@code process_request: trans Host METHOD URL for N}). The host and
 * port are those tinyproxy filters and dials (1.11.1, {@code src/reqs.c}, {@code extract_url}): the
 * URL's authority without user info, its last {@code :port} (default 80, a CONNECT's 443) and the
 * brackets of a v6 literal. Every byte is the client's.
 *
 * @param host null when the request names none tinyproxy would filter (a path only, before the
 *     transparent mode's line names its host)
 * @param port what tinyproxy read ({@code sscanf %d}: it may be no port at all)
 * @param urlCut whether tinyproxy cut its log line inside the URL (at 798 bytes): the URL is its start
 * @param hostCut whether it cut the line inside the authority: the host tinyproxy filtered is unknown
 *     (the {@code @} it starts after and the {@code :} it ends at may lie past the cut)
 */
record Request(String method, String url, String host, long port, boolean urlCut, boolean hostCut) {

  /**
   * The request line as logged: method, URL and, unless tinyproxy cut the log line ({@code lineCut}), the
   * protocol.
   */
  static Request ofLine(String line, boolean lineCut) {
    String[] parts = line.split(" ", 3);
    String method = parts[0];
    String url = parts.length > 1 ? parts[1] : "";
    return of(method, url, lineCut && parts.length < 3);
  }

  /** The URL the transparent mode built from the {@code Host} header: {@code http://HOST:PORT/PATH}. */
  static Request transparent(String method, String url) {
    return of(method, url, false);
  }

  private static Request of(String method, String url, boolean cut) {
    boolean connect = method.equals("CONNECT");
    String authority;
    if (url.regionMatches(true, 0, "http://", 0, 7)) {
      authority = url.substring(7);
    } else if (connect) {
      authority = url;
    } else {
      return new Request(method, url, null, 0, cut, false);
    }
    int slash = authority.indexOf('/');
    boolean hostCut = cut && slash < 0;
    String host = slash >= 0 ? authority.substring(0, slash) : authority;
    int at = host.indexOf('@');
    if (at >= 0) {
      host = host.substring(at + 1);
    }
    long port = connect ? 443 : 80;
    int colon = host.lastIndexOf(':');
    if (colon >= 0 && host.indexOf(']', colon) < 0) {
      String digits = host.substring(colon + 1);
      host = host.substring(0, colon);
      Long read = scanInt(digits);
      if (read != null && read != 0) {
        port = read;
      }
    }
    if (host.startsWith("[") && host.endsWith("]") && host.length() >= 2) {
      host = host.substring(1, host.length() - 1);
    }
    return new Request(method, url, host, port, cut, hostCut);
  }

  boolean isConnect() {
    return method.equals("CONNECT");
  }

  /** The port as an event carries it: null when tinyproxy read none that a socket has. */
  Integer eventPort() {
    return port >= 1 && port <= 65_535 ? (int) port : null;
  }

  /** {@code sscanf("%d")}: white space, a sign, digits; null when no digit follows. */
  private static Long scanInt(String s) {
    int i = 0;
    while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
      i++;
    }
    boolean negative = i < s.length() && s.charAt(i) == '-';
    if (i < s.length() && (s.charAt(i) == '-' || s.charAt(i) == '+')) {
      i++;
    }
    int start = i;
    while (i < s.length() && i - start < 10 && s.charAt(i) >= '0' && s.charAt(i) <= '9') {
      i++;
    }
    if (i == start) {
      return null;
    }
    long v = Long.parseLong(s.substring(start, i));
    return negative ? -v : v;
  }
}
