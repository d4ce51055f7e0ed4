package dev.knockwatch.ingest.formats.envoy;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What one Envoy access log line says, in whichever of the three shapes it was written: Envoy's
 * default format string, Istio's text format, or a {@code json_format} with Istio's field names.
 * A value Envoy wrote as unset ({@code -}, JSON {@code null}, an empty string) is null here.
 *
 * @param shape which format the line is in
 * @param detailsLogged whether the line carries {@code %RESPONSE_CODE_DETAILS%} at all: the default
 *     shape never does, a json_format only where its configuration names the field
 * @param details {@code %RESPONSE_CODE_DETAILS%}; always null in the default shape, which has none
 * @param termination {@code %CONNECTION_TERMINATION_DETAILS%}
 * @param source {@code %DOWNSTREAM_REMOTE_ADDRESS%}, {@code address:port}
 * @param uriSan {@code %DOWNSTREAM_PEER_URI_SAN%} (JSON only)
 * @param subject {@code %DOWNSTREAM_PEER_SUBJECT%} (JSON only)
 */
record AccessLogLine(Shape shape, boolean detailsLogged, String startTime, String method, String path, String responseCode,
    String responseFlags, String details, String termination, String authority, String serverName,
    String source, String uriSan, String subject) {

  enum Shape { ENVOY_DEFAULT, ISTIO_TEXT, JSON }

  /*
   * The text shapes are matched whole. Every field the agent chooses and Envoy writes between
   * quotes unescaped (X-Forwarded-For, User-Agent, X-Request-Id, :authority) is read as [^"]*: a
   * quote in one makes the line unreadable (rejected), never shifts Envoy's own fields. The path is
   * \S++ between the method and the protocol: it holds no space, so it cannot reach the status or
   * the details after it. Istio's unquoted addresses close the line, after the last quoted field.
   */
  private static final String START = "^\\[([^\\]\\s]++)\\] \"([^\\s\"]++) (\\S++) ([^\\s\"]++)\" (\\d{1,3}) (\\S++) ";
  private static final String QUOTED = "\"([^\"]*+)\"";

  /** Envoy's default format string (docs/…/access_log/usage, "Default Format String"). */
  private static final Pattern ENVOY_DEFAULT = Pattern.compile(START
      + "(\\d++) (\\d++) (\\d++) (\\S++) " + QUOTED + " " + QUOTED + " " + QUOTED + " " + QUOTED + " " + QUOTED + "$");

  /** Istio's {@code EnvoyTextLogFormat} (pilot/pkg/model/telemetry_logging.go). */
  private static final Pattern ISTIO_TEXT = Pattern.compile(START
      + "(\\S++) (\\S++) " + QUOTED + " (\\d++) (\\d++) (\\d++) (\\S++) " + QUOTED + " " + QUOTED + " " + QUOTED + " "
      + QUOTED + " " + QUOTED + " (\\S++) (\\S++) (\\S++) (\\S++) (\\S++) (\\S++)$");

  /** The line read as one of the text shapes; null when it is neither. */
  static AccessLogLine text(String line) {
    Matcher m = ISTIO_TEXT.matcher(line);
    if (m.matches()) {
      return new AccessLogLine(Shape.ISTIO_TEXT, true, m.group(1), unset(m.group(2)), unset(m.group(3)), m.group(5),
          unset(m.group(6)), unset(m.group(7)), unset(m.group(8)), unset(m.group(17)), unset(m.group(23)),
          unset(m.group(22)), null, null);
    }
    m = ENVOY_DEFAULT.matcher(line);
    if (m.matches()) {
      return new AccessLogLine(Shape.ENVOY_DEFAULT, false, m.group(1), unset(m.group(2)), unset(m.group(3)), m.group(5),
          unset(m.group(6)), null, null, unset(m.group(14)), null, null, null, null);
    }
    return null;
  }

  /** The line's JSON object read by Istio's {@code EnvoyJSONLogFormatIstio} names and the peer's two added ones. */
  static AccessLogLine json(JsonNode r) {
    return new AccessLogLine(Shape.JSON, r.has("response_code_details"), string(r, "start_time"), string(r, "method"), string(r, "path"),
        string(r, "response_code"), string(r, "response_flags"), string(r, "response_code_details"),
        string(r, "connection_termination_details"), string(r, "authority"), string(r, "requested_server_name"),
        string(r, "downstream_remote_address"), string(r, "downstream_peer_uri_san"),
        string(r, "downstream_peer_subject"));
  }

  /** json_format writes a lone operator typed (a status as a number), an unset one as null. */
  private static String string(JsonNode r, String key) {
    JsonNode v = r.get(key);
    if (v == null || v.isNull() || v.isContainerNode()) {
      return null;
    }
    return unset(v.asText());
  }

  private static String unset(String v) {
    return v == null || v.isEmpty() || v.equals("-") ? null : v;
  }
}
