package dev.knockwatch.ingest.raw;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.ingest.Hostile;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;

class RawRecordTest {

  static final String LINE = "{\"line\":\"deny network-outbound evil.test:443\"}";
  static final String PATH = "/var/log/knockwatch/ci-runner-1/abcdefghijklmnopqrstuv.violations.jsonl";

  static RawRecord.Read read(String json) {
    return RawRecord.read(json.getBytes(StandardCharsets.UTF_8));
  }

  static RawRecord ok(String json) {
    RawRecord.Read r = read(json);
    assertThat(r).as(json).isInstanceOf(RawRecord.Line.class);
    return ((RawRecord.Line) r).record();
  }

  static String problem(String json) {
    RawRecord.Read r = read(json);
    assertThat(r).as(json).isInstanceOf(RawRecord.Problem.class);
    return ((RawRecord.Problem) r).reason();
  }

  @Test
  void eachShippersShapeIsReadByItsNames() {
    RawRecord contract = new RawRecord(LINE, PATH, "sandbox-7", 1234L);
    String line = quote(LINE);
    // the contract's own names
    assertThat(ok("{\"line\":" + line + ",\"path\":\"" + PATH + "\",\"host\":\"sandbox-7\",\"offset\":1234}"))
        .isEqualTo(contract);
    // rsyslog: msg, hostname, $!metadata!filename and fileoffset (as strings), flat or as the $! tree
    assertThat(ok("{\"msg\":" + line + ",\"hostname\":\"sandbox-7\",\"filename\":\"" + PATH
        + "\",\"fileoffset\":\"1234\"}")).isEqualTo(contract);
    assertThat(ok("{\"msg\":" + line + ",\"hostname\":\"sandbox-7\",\"metadata\":{\"filename\":\"" + PATH
        + "\",\"fileoffset\":\"1234\"}}")).isEqualTo(contract);
    // Vector's file source
    assertThat(ok("{\"message\":" + line + ",\"file\":\"" + PATH + "\",\"host\":\"sandbox-7\",\"offset\":1234,"
        + "\"source_type\":\"file\",\"timestamp\":\"2026-12-04T00:00:00Z\"}")).isEqualTo(contract);
    // syslog-ng: no offset
    assertThat(ok("{\"MESSAGE\":" + line + ",\"FILE_NAME\":\"" + PATH + "\",\"HOST\":\"sandbox-7\"}"))
        .isEqualTo(new RawRecord(LINE, PATH, "sandbox-7", null));
    // Fluent Bit's tail: log, Path_Key path, Offset_Key offset
    assertThat(ok("{\"log\":" + line + ",\"path\":\"" + PATH + "\",\"offset\":1234,\"hostname\":\"sandbox-7\"}"))
        .isEqualTo(contract);
    // Filebeat: host and log are objects, the containers of host.name, log.file.path and log.offset
    assertThat(ok("{\"message\":" + line + ",\"host\":{\"name\":\"sandbox-7\"},\"log\":{\"offset\":1234,"
        + "\"file\":{\"path\":\"" + PATH + "\"}},\"agent\":{\"type\":\"filebeat\"}}")).isEqualTo(contract);
  }

  @Test
  void aRecordThatIsNoRawLineSaysWhyWithoutTheAgentsBytes() {
    assertThat(RawRecord.read(null)).isInstanceOf(RawRecord.Problem.class);
    assertThat(problem("deny network-outbound evil.test:443")).isEqualTo("the value is not JSON");
    assertThat(problem("[1,2]")).isEqualTo("the value is not a JSON object");
    assertThat(problem("{\"path\":\"" + PATH + "\"}")).startsWith("no line");
    assertThat(problem("{\"line\":\"x\"}")).startsWith("no path");
    assertThat(problem("{\"line\":5,\"path\":\"" + PATH + "\"}")).isEqualTo("the line (line) is not a string");
    assertThat(problem("{\"line\":\"x\",\"path\":\"\"}")).contains("empty");
    assertThat(problem("{\"line\":\"x\",\"path\":\"" + PATH + "\",\"host\":\"a b<script>\"}")).startsWith("the host is no host name");
    assertThat(problem("{\"line\":\"x\",\"path\":\"" + PATH + "\",\"offset\":-1}")).contains("negative");
    assertThat(problem("{\"line\":\"x\",\"path\":\"" + PATH + "\",\"offset\":\"12a\"}")).contains("no byte offset");
    assertThat(problem("{\"line\":\"x\",\"path\":\"" + PATH + "\",\"offset\":1.5}")).contains("no byte offset");
  }

  @Test
  void bytesThatAreNotUtf8AreReadAsTheAgentReadsThemFromAFile() {
    // rsyslog writes a line's bytes as they are into its JSON
    byte[] value = ("{\"line\":\"invalid \u00ff\u00fe utf8\",\"path\":\"" + PATH + "\"}")
        .getBytes(StandardCharsets.ISO_8859_1);
    RawRecord.Read r = RawRecord.read(value);
    assertThat(r).isInstanceOf(RawRecord.Line.class);
    RawRecord raw = ((RawRecord.Line) r).record();
    assertThat(raw.line()).isEqualTo("invalid \uFFFD\uFFFD utf8");
    assertThat(raw.invalidUtf8()).isTrue();
    assertThat(ok("{\"line\":\"\uFFFD as written\",\"path\":\"" + PATH + "\"}").invalidUtf8()).isFalse();
  }

  @Test
  void twoNamesOfOnePartThatDisagreeAreRefusedNeverGuessed() {
    assertThat(problem("{\"line\":\"a\",\"msg\":\"b\",\"path\":\"" + PATH + "\"}"))
        .isEqualTo("two different lines, under line and msg");
    assertThat(problem("{\"line\":\"a\",\"path\":\"" + PATH + "\",\"file\":\"/var/log/knockwatch/x/y.strace\"}"))
        .isEqualTo("two different paths, under path and file");
    assertThat(problem("{\"line\":\"a\",\"path\":\"" + PATH + "\",\"offset\":1,\"fileoffset\":\"2\"}"))
        .isEqualTo("two different offsets");
    // the same value under two names is one value
    assertThat(ok("{\"line\":\"a\",\"msg\":\"a\",\"path\":\"" + PATH + "\",\"offset\":7,\"fileoffset\":\"7\"}"))
        .isEqualTo(new RawRecord("a", PATH, null, 7L));
  }

  @Test
  void anyLineTheAgentWroteComesBackExactlyAndRandomBytesNeverThrow() {
    Random random = new Random(47);
    String[] pieces = {"\ud800", "\udfff", "\u0000", "\u001b[2J", "\u202e", "\u2066", "\u2028", "\ufffe", "\"", "\\",
        "\",\"path\":\"/etc/passwd", "\"}{\"line\":\"forged", "<!channel>", "é", "日本", "\n", "\r"};
    for (int i = 0; i < 5_000; i++) {
      StringBuilder b = new StringBuilder();
      int n = random.nextInt(i % 100 == 0 ? 5_000 : 20);
      for (int k = 0; k < n; k++) {
        b.append(random.nextBoolean() ? pieces[random.nextInt(pieces.length)] : String.valueOf((char) random.nextInt(0x10000)));
      }
      String agentText = b.toString();
      RawRecord r = ok("{\"msg\":" + quote(agentText) + ",\"filename\":\"" + PATH + "\",\"fileoffset\":\"" + i + "\"}");
      assertThat(r.line()).isEqualTo(agentText);
      assertThat(r.path()).isEqualTo(PATH);
      assertThat(r.offset()).isEqualTo((long) i);

      byte[] bytes = new byte[random.nextInt(300)];
      random.nextBytes(bytes);
      RawRecord.Read any = RawRecord.read(bytes);
      assertThat(any).isNotNull();
    }
  }

  static String quote(String s) {
    return Hostile.json(s);
  }
}
