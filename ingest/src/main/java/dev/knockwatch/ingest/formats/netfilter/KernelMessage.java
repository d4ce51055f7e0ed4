package dev.knockwatch.ingest.formats.netfilter;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.Year;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A kernel message as one of its carriers wrote it: the message's text, whether the carrier says
 * the kernel wrote it, its time and host where the carrier gives them. The carriers, each seen
 * with Linux 6.18, util-linux 2.38.1, systemd-journald 252 and rsyslog 8.2302 (samples beside the
 * format's tests):
 * <ul>
 *   <li>{@code /dev/kmsg}: {@code PRI,SEQ,USEC,FLAGS;TEXT}; PRI is facility × 8 + level, and the
 *       kernel gives user space's writes facility 1 or more (printk.c, {@code devkmsg_write}):
 *       facility 0 is the kernel's. Lines that start with a space are a record's metadata.
 *   <li>dmesg: {@code [ SEC.USEC] TEXT}, {@code -r}: {@code <PRI>[ SEC.USEC] TEXT}, {@code -x}:
 *       {@code FACILITY:LEVEL : [ SEC.USEC] TEXT}, {@code --time-format=iso}: an ISO time with a
 *       comma. Plain dmesg says nothing of the writer.
 *   <li>syslog, as rsyslog's imklog and journalctl write it: {@code RFC3339 HOST TAG: TEXT}
 *       (RSYSLOG_FileFormat, {@code -o short-iso}), {@code Mmm dd hh:mm:ss[.frac] HOST TAG: TEXT}
 *       (traditional, {@code -o short-precise}), {@code <PRI>1 RFC3339 HOST APP - - - TEXT}
 *       (RFC 5424): the tag (app) must be {@code kernel} with no process id, the PRI's facility 0
 *       (a process can call itself {@code kernel} through {@code logger -t kernel}: a syslog file
 *       without facilities is only as good as what writes to it, docs/TRUST.md). rsyslog keeps the
 *       kernel's {@code [ SEC.USEC] } before the text.
 *   <li>journald's JSON ({@code journalctl -k -o json}): {@code _TRANSPORT} must be {@code kernel};
 *       {@code __REALTIME_TIMESTAMP} in microseconds is when journald received it.
 * </ul>
 * The kernel's seconds since boot are no wall time: without one the refusal takes the time ingest
 * read it.
 *
 * @param fromKernel TRUE when the carrier says the kernel wrote it, FALSE when it says another
 *     writer did, null when it does not say (plain dmesg)
 */
record KernelMessage(String text, Boolean fromKernel, Instant at, String host) {

  private static final Pattern KMSG = Pattern.compile("^(\\d{1,4}),(\\d{1,20}),(\\d{1,20}),[^;]{0,64};(.*)$", Pattern.DOTALL);
  private static final Pattern DMESG = Pattern.compile("^\\[\\s*\\d{1,12}\\.\\d{1,9}\\] ?(.*)$", Pattern.DOTALL);
  private static final Pattern DMESG_RAW = Pattern.compile("^<(\\d{1,4})>\\[\\s*\\d{1,12}\\.\\d{1,9}\\] ?(.*)$", Pattern.DOTALL);
  private static final Pattern DMESG_DECODE =
      Pattern.compile("^([a-z]{2,8})\\s*:([a-z]{3,8})\\s*: \\[\\s*\\d{1,12}\\.\\d{1,9}\\] ?(.*)$", Pattern.DOTALL);
  private static final Pattern DMESG_ISO = Pattern.compile(
      "^(\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d),(\\d{1,9})([+-]\\d\\d:\\d\\d) (.*)$", Pattern.DOTALL);
  private static final Pattern RFC5424 = Pattern.compile(
      "^<(\\d{1,4})>1 (\\S{1,64}) (\\S{1,255}) (\\S{1,48}) \\S{1,128} \\S{1,32} (?:-|\\[.*?\\]) ?(.*)$", Pattern.DOTALL);
  private static final Pattern ISO_SYSLOG = Pattern.compile(
      "^(\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(?:\\.\\d{1,9})?(?:Z|[+-]\\d\\d:?\\d\\d)) (\\S{1,255}) ([^\\s:\\[]{1,48})(\\[\\d{1,10}\\])?: ?(.*)$",
      Pattern.DOTALL);
  private static final Pattern BSD_SYSLOG = Pattern.compile(
      "^([A-Z][a-z]{2}) {1,2}(\\d{1,2}) (\\d\\d:\\d\\d:\\d\\d)(\\.\\d{1,9})? (\\S{1,255}) ([^\\s:\\[]{1,48})(\\[\\d{1,10}\\])?: ?(.*)$",
      Pattern.DOTALL);
  /** The kernel's seconds since boot, which rsyslog keeps at the start of the text. */
  private static final Pattern UPTIME = Pattern.compile("^\\[\\s*\\d{1,12}\\.\\d{1,9}\\] ?");
  private static final DateTimeFormatter BSD = DateTimeFormatter.ofPattern("MMM d HH:mm:ss yyyy", Locale.ROOT);

  /** The message a text line carries; null when no carrier's shape fits it. */
  static KernelMessage of(String line, Instant now) {
    Matcher m;
    if ((m = KMSG.matcher(line)).matches()) {
      return new KernelMessage(m.group(4), facility(m.group(1)) == 0, null, null);
    }
    if ((m = DMESG.matcher(line)).matches()) {
      return new KernelMessage(m.group(1), null, null, null);
    }
    if ((m = DMESG_RAW.matcher(line)).matches()) {
      return new KernelMessage(m.group(2), facility(m.group(1)) == 0, null, null);
    }
    if ((m = DMESG_DECODE.matcher(line)).matches()) {
      return new KernelMessage(m.group(3), m.group(1).equals("kern"), null, null);
    }
    if ((m = DMESG_ISO.matcher(line)).matches()) {
      return new KernelMessage(m.group(4), null, iso(m.group(1) + "." + m.group(2) + m.group(3)), null);
    }
    if ((m = RFC5424.matcher(line)).matches()) {
      return new KernelMessage(uptimeCut(m.group(5)), facility(m.group(1)) == 0 && m.group(4).equals("kernel"),
          iso(m.group(2)), m.group(3));
    }
    // the kernel's lines carry the tag kernel and no process id
    if ((m = ISO_SYSLOG.matcher(line)).matches()) {
      return new KernelMessage(uptimeCut(m.group(5)), m.group(3).equals("kernel") && m.group(4) == null, iso(m.group(1)),
          m.group(2));
    }
    if ((m = BSD_SYSLOG.matcher(line)).matches()) {
      return new KernelMessage(uptimeCut(m.group(8)), m.group(6).equals("kernel") && m.group(7) == null, bsd(m, now),
          m.group(5));
    }
    return null;
  }

  /** The message a journald JSON record carries; null when it holds no {@code MESSAGE} text. */
  static KernelMessage ofJournal(JsonNode record) {
    JsonNode message = record.get("MESSAGE");
    if (message == null || !message.isTextual()) {
      return null;
    }
    JsonNode transport = record.get("_TRANSPORT");
    Instant at = null;
    JsonNode realtime = record.get("__REALTIME_TIMESTAMP");
    if (realtime != null && realtime.isTextual() && realtime.asText().matches("\\d{1,18}")) {
      long micros = Long.parseLong(realtime.asText());
      at = Instant.ofEpochSecond(micros / 1_000_000, (micros % 1_000_000) * 1_000);
    }
    JsonNode host = record.get("_HOSTNAME");
    return new KernelMessage(message.asText(), transport != null && "kernel".equals(transport.asText()), at,
        host != null && host.isTextual() ? host.asText() : null);
  }

  private static int facility(String pri) {
    return Integer.parseInt(pri) >> 3;
  }

  private static String uptimeCut(String text) {
    Matcher m = UPTIME.matcher(text);
    return m.lookingAt() ? text.substring(m.end()) : text;
  }

  /** An RFC 3339 time; the unreadable-time mark when it is none. */
  private static Instant iso(String text) {
    try {
      return OffsetDateTime.parse(text.length() > 5 && text.matches(".*[+-]\\d{4}$")
          ? text.substring(0, text.length() - 2) + ":" + text.substring(text.length() - 2) : text).toInstant();
    } catch (DateTimeParseException e) {
      return dev.knockwatch.ingest.spi.SourceLine.UNREADABLE_TIME;
    }
  }

  /**
   * A traditional syslog time, which has no year and no zone: UTC (rsyslog's and journalctl's
   * default here), in the year that puts it no later than a day after {@code now}.
   */
  private static Instant bsd(Matcher m, Instant now) {
    int year = Year.from(now.atZone(ZoneOffset.UTC)).getValue();
    try {
      String day = m.group(1) + " " + m.group(2) + " " + m.group(3) + " ";
      LocalDateTime t = LocalDateTime.parse(day + year, BSD);
      if (t.toInstant(ZoneOffset.UTC).isAfter(now.plusSeconds(86_400))) {
        t = LocalDateTime.parse(day + (year - 1), BSD);
      }
      Instant at = t.toInstant(ZoneOffset.UTC);
      if (m.group(4) != null) {
        String frac = (m.group(4).substring(1) + "000000000").substring(0, 9);
        at = at.plusNanos(Long.parseLong(frac));
      }
      return at;
    } catch (DateTimeParseException e) {
      return dev.knockwatch.ingest.spi.SourceLine.UNREADABLE_TIME;
    }
  }
}
