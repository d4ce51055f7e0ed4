package dev.knockwatch.ingest.formats.ocsf;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.HostClassifier;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Redactor;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.spi.Attribution;
import dev.knockwatch.ingest.spi.Identities;
import dev.knockwatch.ingest.spi.JsonLine;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.Rejection;
import dev.knockwatch.ingest.spi.SourceLine;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * One OCSF event, a JSON object a line. Its {@code class_uid} says what it is: Network Activity
 * (4001) and HTTP Activity (4002) are read, a Detection Finding and every other class skipped. Of
 * those read, one Denied ({@code action_id} 2) or Blocked ({@code disposition_id} 2) is a refusal; the
 * ids are the schema's, so a producer's caption ({@code action}, {@code disposition}) counts only where
 * it wrote no id. Who was refused is what the source's {@code agents} map the event's identity to.
 */
final class OcsfParser implements LineParser {

  static final int NETWORK_ACTIVITY = 4001;
  static final int HTTP_ACTIVITY = 4002;
  static final int DETECTION_FINDING = 2004;
  private static final int DENIED = 2;
  private static final int BLOCKED = 2;
  private static final int REFUSE = 5;
  /** OpenShell's word for a field it could not fill (a process it could not read). */
  private static final String NONE = "-";
  private static final int MAX_NAME_CHARS = 128;
  /** 9999-12-31T23:59:59.999Z: a later time is no time a producer wrote. */
  private static final long LAST_MILLIS = 253_402_300_799_999L;

  private final Identities agents;

  OcsfParser(Identities agents) {
    this.agents = agents;
  }

  /** Its mapping is fixed, and each line is read alone. */
  @Override
  public boolean linesStandAlone() {
    return true;
  }

  @Override
  public Parsed parse(SourceLine src) {
    String text = src.text();
    if (!text.startsWith("{")) {
      return Parsed.skipped("not-json");
    }
    JsonLine line = JsonLine.read(text);
    if (line.object() == null) {
      return line.rejected();
    }
    JsonNode root = line.object();
    JsonNode classUid = root.get("class_uid");
    if (classUid == null || !classUid.canConvertToInt() || !classUid.isIntegralNumber()) {
      return Parsed.rejected(Rejection.UNPARSEABLE, "a JSON object with no integer class_uid: no OCSF event");
    }
    int cls = classUid.intValue();
    if (cls == DETECTION_FINDING) {
      return Parsed.skipped("finding");
    }
    if (cls != NETWORK_ACTIVITY && cls != HTTP_ACTIVITY) {
      return Parsed.skipped("other-class");
    }
    boolean denied = outcome(root, "action_id", "action", DENIED, "Denied");
    boolean blocked = outcome(root, "disposition_id", "disposition", BLOCKED, "Blocked");
    return denied || blocked ? refusal(src, root, cls) : Parsed.skipped("allowed");
  }

  /** The id where the producer wrote one, else its caption. */
  private static boolean outcome(JsonNode r, String idKey, String captionKey, int id, String caption) {
    JsonNode v = r.get(idKey);
    if (v != null && v.isIntegralNumber()) {
      return v.canConvertToInt() && v.intValue() == id;
    }
    return caption.equals(string(r, captionKey));
  }

  private Parsed refusal(SourceLine src, JsonNode r, int cls) {
    Instant at = time(r.get("time"));
    String container = name(string(r.path("container"), "name"));
    String containerUid = name(string(r.path("container"), "uid"));
    String user = name(string(r.path("actor").path("user"), "name"));
    String device = name(string(r.path("device"), "hostname"));
    JsonNode srcEndpoint = r.path("src_endpoint");
    String srcIp = string(srcEndpoint, "ip");
    String address = srcIp != null && HostClassifier.isIpLiteral(srcIp) ? HostClassifier.canonical(srcIp) : null;

    Map<String, String> knows = new LinkedHashMap<>();
    put(knows, OcsfFormat.CONTAINER_NAME, container);
    put(knows, OcsfFormat.CONTAINER_UID, containerUid);
    put(knows, OcsfFormat.USER, user);
    put(knows, OcsfFormat.DEVICE, device);
    put(knows, OcsfFormat.SOURCE_IP, address);
    String identity = container != null ? "container=" + container
        : containerUid != null ? "container.uid=" + containerUid
        : user != null ? "user=" + user
        : device != null ? "device=" + device
        : address != null ? "src=" + address : "no-identity";
    Attribution.Result who = Attribution.ofWall(OcsfFormat.NAME, identity, knows, agents);
    if (!(who instanceof Attribution.Attributed attributed)) {
      Attribution.Refused refused = (Attribution.Refused) who;
      return new Parsed.Rejected(refused.code(), refused.reason(), at, refused.identity());
    }

    JsonNode request = r.path("http_request");
    JsonNode url = request.path("url");
    String method = cls == HTTP_ACTIVITY ? word(string(request, "http_method")) : null;
    String action = cls == HTTP_ACTIVITY ? ("CONNECT".equals(method) ? "http-connect" : "http-request")
        : r.path("activity_id").asInt(-1) == REFUSE ? "connect" : "network-outbound";
    JsonNode dst = r.path("dst_endpoint");
    String host = first(string(dst, "domain"), string(dst, "hostname"), string(dst, "ip"), string(url, "hostname"));
    Integer port = port(dst.get("port"));
    if (port == null) {
      port = port(url.get("port"));
    }
    String canonical = host == null || host.isBlank() ? null : HostClassifier.canonical(host);
    JsonNode process = r.path("actor").path("process");
    String cmdLine = string(process, "cmd_line");
    JsonNode pid = process.get("pid");
    String detail = string(r, "status_detail");
    String rule = name(string(r.path("firewall_rule"), "name"));
    String reason = first(detail, string(r, "message"), rule == null ? null : "firewall rule " + rule);
    String protocol = word(string(r.path("connection_info"), "protocol_name"));

    // the sandbox the producer names (OpenShell's sandbox is its container) is the refusal's session
    String sandbox = Attribution.grainId(container != null ? container : containerUid);
    ViolationEvent.Builder b = src.newEvent().agentId(attributed.agentId()).commandUnknown(true).sessionId(sandbox)
        .source(OcsfFormat.NAME).kind(Kind.NETWORK).action(action).method(method)
        .url(urlOf(url))
        .reason(reason == null || reason.isBlank() ? null : Sanitize.text(reason.strip(), Sanitize.MAX_TEXT_CHARS))
        .sourceAddress(address).sourcePort(address == null ? null : port(srcEndpoint.get("port")))
        .pid(pid != null && pid.isIntegralNumber() && pid.canConvertToInt() && pid.intValue() > 0 ? pid.intValue() : null)
        .commandText(cmdLine == null || cmdLine.isBlank() || NONE.equals(cmdLine) ? null
            : Redactor.safe(cmdLine, Sanitize.MAX_COMMAND_CHARS))
        .protocol(protocol == null ? null : protocol.toLowerCase(Locale.ROOT))
        .subject(new ViolationEvent.Subject(OcsfFormat.NAME, identity))
        .producer(ProducerRecord.copy(r))
        .observedAt(at);
    if (canonical == null || canonical.isEmpty()) {
      b.targetUnknown(true);
    } else {
      b.host(canonical).port(port).addressClass(HostClassifier.classify(canonical).orElse(null));
    }
    return Parsed.of(b.build());
  }

  /** The request's URL: its {@code url_string}, else the one its parts make; redacted and bounded. */
  private static String urlOf(JsonNode url) {
    String whole = string(url, "url_string");
    if (whole == null) {
      String scheme = string(url, "scheme");
      String host = string(url, "hostname");
      if (scheme == null || host == null) {
        return null;
      }
      Integer port = port(url.get("port"));
      String path = string(url, "path");
      whole = scheme + "://" + host + (port == null ? "" : ":" + port) + (path == null ? "" : path);
    }
    return Redactor.safe(whole, Sanitize.MAX_URL_CHARS);
  }

  /** OCSF's {@code timestamp_t}: milliseconds since the epoch; null when absent. */
  private static Instant time(JsonNode v) {
    if (v == null || v.isNull()) {
      return null;
    }
    if (!v.isIntegralNumber() || !v.canConvertToLong()) {
      return SourceLine.UNREADABLE_TIME;
    }
    long ms = v.longValue();
    return ms < 0 || ms > LAST_MILLIS ? SourceLine.UNREADABLE_TIME : Instant.ofEpochMilli(ms);
  }

  private static Integer port(JsonNode v) {
    return v != null && v.isIntegralNumber() && v.canConvertToInt() && v.intValue() > 0 && v.intValue() <= 65535
        ? v.intValue() : null;
  }

  /** A name the producer wrote made safe and bounded; null when empty or OpenShell's {@code -}. */
  private static String name(String s) {
    if (s == null || s.isEmpty() || NONE.equals(s)) {
      return null;
    }
    String n = Sanitize.text(s, MAX_NAME_CHARS);
    return n.isBlank() ? null : n;
  }

  /** A one-word field (a method, a protocol) made safe and bounded; null when empty. */
  private static String word(String s) {
    if (s == null || s.isBlank()) {
      return null;
    }
    return Sanitize.text(s.strip(), Sanitize.MAX_WORD_CHARS);
  }

  private static String first(String... values) {
    for (String v : values) {
      if (v != null && !v.isBlank()) {
        return v;
      }
    }
    return null;
  }

  private static String string(JsonNode r, String key) {
    JsonNode v = r.get(key);
    return v == null || !v.isTextual() ? null : v.textValue();
  }

  private static void put(Map<String, String> m, String k, String v) {
    if (v != null) {
      m.put(k, v);
    }
  }
}
