package dev.knockwatch.ingest.formats.proxy;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code curl --trace} output, turned back into what {@code curl -v} prints: {@code == Info: X}
 * is {@code * X}, and a dump of the headers sent ({@code => Send header, N bytes}) or received
 * ({@code <= Recv header, N bytes}) is read from its hex rows ({@code 0000: 48 54 ... HTTP/1.1 4})
 * and given back, once its N bytes are in, as the header lines it holds. Data dumps (bodies, TLS)
 * are read past. One instance reads one file.
 */
final class TraceDump {

  /** A dump larger than this is no header block curl would print: it is read past. */
  static final int MAX_BYTES = 64 * 1024;
  private static final Pattern BLOCK = Pattern.compile("^(=>|<=) (Send|Recv) (header|data|SSL data), (\\d{1,9}) bytes \\(0x[0-9a-f]+\\)$");
  private static final Pattern ROW = Pattern.compile("^[0-9a-f]{4,8}: ");

  /** What a line of the file was. */
  sealed interface Read permits NotTrace, Info, Pending, Done {}

  /** Not a line of a trace: the caller reads it as it is (a dump cut short ends here). */
  record NotTrace() implements Read {}

  /** {@code == Info: text}. */
  record Info(String text) implements Read {}

  /** A line of a dump that is not complete yet, or of one whose content is not headers. */
  record Pending() implements Read {}

  /** The last row of a header dump: its lines, without their CRLF; {@code sent}: the request's. */
  record Done(boolean sent, List<String> lines) implements Read {}

  private boolean inBlock;
  private boolean headers;
  private boolean sent;
  private int expected;
  private int got;
  private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();

  private static final Read NOT_TRACE = new NotTrace();
  private static final Read PENDING = new Pending();

  Read read(String line) {
    // most lines of most transcripts are curl -v's: two character comparisons tell them apart
    if (!inBlock && (line.length() < 3 || (line.charAt(0) != '=' && line.charAt(0) != '<') || line.charAt(2) != ' ')) {
      return NOT_TRACE;
    }
    if (line.startsWith("== Info: ")) {
      inBlock = false;
      return new Info(line.substring("== Info: ".length()));
    }
    Matcher b = BLOCK.matcher(line);
    if (b.matches()) {
      int n = Integer.parseInt(b.group(4));
      inBlock = n > 0;
      headers = b.group(3).equals("header") && n <= MAX_BYTES;
      sent = b.group(1).equals("=>");
      expected = n;
      got = 0;
      bytes.reset();
      return PENDING;
    }
    if (!inBlock || !ROW.matcher(line).find()) {
      inBlock = false;
      return NOT_TRACE;
    }
    int at = line.indexOf(": ") + 2;
    int want = Math.min(16, expected - got);
    for (int i = 0; i < want; i++, at += 3) {
      int hi = at + 1 < line.length() ? Character.digit(line.charAt(at), 16) : -1;
      int lo = at + 1 < line.length() ? Character.digit(line.charAt(at + 1), 16) : -1;
      if (hi < 0 || lo < 0) {
        inBlock = false; // a row that is no hex dump: the block is read past
        return PENDING;
      }
      if (headers) {
        bytes.write(hi << 4 | lo);
      }
      got++;
    }
    if (got < expected) {
      return PENDING;
    }
    if (!headers) {
      inBlock = false;
      return PENDING;
    }
    inBlock = false;
    String text = bytes.toString(StandardCharsets.UTF_8);
    if (text.endsWith("\n")) {
      text = text.substring(0, text.length() - 1);
    }
    return new Done(sent, text.lines().map(l -> l.endsWith("\r") ? l.substring(0, l.length() - 1) : l).toList());
  }
}
