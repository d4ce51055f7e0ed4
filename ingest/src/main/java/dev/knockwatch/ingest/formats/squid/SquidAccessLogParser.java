package dev.knockwatch.ingest.formats.squid;

import dev.knockwatch.events.CommandId;
import dev.knockwatch.events.HostClassifier;
import dev.knockwatch.events.HostClassifier.HostPort;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.Redactor;
import dev.knockwatch.events.Sanitize;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.spi.Attribution;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.Rejection;
import dev.knockwatch.ingest.spi.SourceLine;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Squid access logs: denied requests (TCP_DENIED, any 403/407) become events, allowed ones are
 * skipped and counted. Without a configured logformat each line is tried as the {@code knock},
 * {@code squid} and {@code combined} formats.
 *
 * <p>The commandId is the {@code X-Command-Id} request header (Squid URL-encodes header values,
 * but not '%' itself), else the proxy user {@code srt.<base64>}, else the file name. A user name
 * that Squid lower-cased ({@code auth_param basic casesensitive off}) cannot be decoded
 * faithfully: it is treated as no id, never as another command.
 */
public final class SquidAccessLogParser implements LineParser {

  private static final List<SquidLogFormat> DEFAULT_FORMATS =
      List.of(SquidLogFormat.of("knock"), SquidLogFormat.of("squid"), SquidLogFormat.of("combined"));
  private static final DateTimeFormatter LOCAL_TIME = DateTimeFormatter.ofPattern("dd/MMM/yyyy:HH:mm:ss Z", Locale.ROOT);
  private static final Pattern PERCENT = Pattern.compile("%([0-9A-Fa-f]{2})");

  private final List<SquidLogFormat> formats;

  public SquidAccessLogParser() {
    this(DEFAULT_FORMATS);
  }

  /** One configured format (a name or a logformat string). */
  public SquidAccessLogParser(String logformat) {
    this(List.of(SquidLogFormat.of(logformat)));
  }

  private SquidAccessLogParser(List<SquidLogFormat> formats) {
    this.formats = formats;
  }

  /** Its formats (or mapping) are immutable, and each line is read alone. */
  @Override
  public boolean linesStandAlone() {
    return true;
  }

  @Override
  public Parsed parse(SourceLine src) {
    SquidLogFormat.Fields f = null;
    for (SquidLogFormat format : formats) {
      Optional<SquidLogFormat.Fields> read = format.read(src.text());
      if (read.isPresent()) {
        f = read.get();
        break;
      }
    }
    if (f == null) {
      return Parsed.rejected(Rejection.UNPARSEABLE, "not a Squid access log line in the "
          + (formats.size() == 1 ? "configured logformat" : "squid, knock or combined format"));
    }
    String status = f.get("status", "");
    String result = f.get("result", "");
    boolean denied = status.equals("403") || status.equals("407") || result.contains("DENIED");
    if (!denied) {
      return Parsed.skipped("allowed");
    }
    String method = f.get("method", "-");
    String target = f.get("url", "-");
    Optional<HostPort> hp = method.equals("CONNECT") ? HostClassifier.hostPort(target) : HostClassifier.fromUrl(target);

    String header = f.get("header:x-command-id", "-");
    String user = f.get("user", "-");
    String headerId = header.equals("-") ? null : percentDecode(header);
    Optional<String> userId = decodeSrtUser(user);
    // docs/TRUST.md: the header and the proxy user are the client's claims, the only ones a shared log
    // has; a source config that names the command ({commandId} in its path) decides over them
    String claimed = headerId != null && CommandId.isValid(headerId) ? headerId : userId.orElse(null);
    Attribution.Result who = Attribution.of(src, null, claimed);
    if (who instanceof Attribution.Refused r) {
      String why = headerId != null ? "the X-Command-Id header \"" + Sanitize.text(headerId, 64) + "\": "
          + CommandId.problem(headerId).orElse("")
          : user.startsWith("srt.") ? "the proxy user " + Sanitize.text(user, 80)
              + " does not decode to a command id (Squid lower-cases user names unless auth_param basic casesensitive on)"
          : r.reason() + " (no X-Command-Id header and no srt proxy user)";
      return Parsed.rejected(headerId != null ? Rejection.forCommandId(headerId) : r.code(), why);
    }
    String reason = status.equals("407") ? "proxy authentication required" : "access denied by the proxy";
    ViolationEvent.Builder b = ((Attribution.Attributed) who).applyTo(src.newEvent())
        .source(SquidFormat.NAME)
        .kind(Kind.NETWORK)
        .action(method.equals("CONNECT") ? "http-connect" : "http-request")
        .method(Sanitize.text(method, 16))
        .url(method.equals("CONNECT") ? null : Redactor.safe(target, 1024))
        .reason(reason + " (" + Sanitize.text(result, 40) + "/" + Sanitize.text(status, 3) + ")")
        .observedAt(time(f));
    hp.ifPresent(h -> b.host(h.host()).port(h.port()).addressClass(HostClassifier.classify(h.host()).orElse(null)));
    return Parsed.of(b.build());
  }


  /** Squid URL-encodes header values except '%' itself: decode %XX pairs only, leave a lone '%'. */
  static String percentDecode(String s) {
    if (s.indexOf('%') < 0) {
      return s;
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    Matcher m = PERCENT.matcher(s);
    int i = 0;
    while (m.find()) {
      out.writeBytes(s.substring(i, m.start()).getBytes(StandardCharsets.UTF_8));
      out.write(Integer.parseInt(m.group(1), 16));
      i = m.end();
    }
    out.writeBytes(s.substring(i).getBytes(StandardCharsets.UTF_8));
    return out.toString(StandardCharsets.UTF_8);
  }

  static Optional<String> decodeSrtUser(String user) {
    if (!user.startsWith("srt.")) {
      return Optional.empty();
    }
    try {
      String decoded = new String(Base64.getDecoder().decode(user.substring(4)), StandardCharsets.UTF_8);
      return CommandId.isValid(decoded) ? Optional.of(decoded) : Optional.empty();
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  /** The line's time; null when its format has none, {@link SourceLine#UNREADABLE_TIME} when it cannot be read. */
  private static Instant time(SquidLogFormat.Fields f) {
    try {
      if (f.has("time")) {
        long seconds = Long.parseLong(f.get("time", null));
        long millis = f.has("millis") ? Long.parseLong(f.get("millis", null)) : 0;
        return Instant.ofEpochSecond(seconds, millis * 1_000_000);
      }
      if (f.has("localTime")) {
        return ZonedDateTime.parse(f.get("localTime", null), LOCAL_TIME).toInstant();
      }
    } catch (NumberFormatException | java.time.DateTimeException | ArithmeticException e) {
      return SourceLine.UNREADABLE_TIME;
    }
    return null;
  }
}
