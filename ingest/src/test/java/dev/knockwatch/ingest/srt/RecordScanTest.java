package dev.knockwatch.ingest.srt;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.ingest.Mangle;
import dev.knockwatch.ingest.srt.SrtViolationParser.Record;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The one-pass record scan must read every record exactly as Jackson does, or leave it to Jackson. */
class RecordScanTest {

  private static List<String> fixtureRecords() throws IOException {
    List<String> out = new ArrayList<>();
    for (SrtViolationParserTest.Run run : SrtViolationParserTest.runs()) {
      out.addAll(run.records());
    }
    return out;
  }

  private static String fields(Record r) {
    return r == null ? "not an object" : String.join("|", String.valueOf(r.line), String.valueOf(r.encodedCommand),
        String.valueOf(r.command), String.valueOf(r.timestamp), String.valueOf(r.commandId), String.valueOf(r.agentId));
  }

  /** Jackson's reading, or "error" when Jackson refuses the text. */
  private static String jackson(String text) {
    try {
      return fields(Record.jackson(text));
    } catch (IOException e) {
      return "error";
    }
  }

  @Test
  void everyFixtureRecordTakesTheFastPathAndReadsAsJacksonReadsIt() throws IOException {
    List<String> records = fixtureRecords();
    assertThat(records).hasSizeGreaterThan(10);
    for (String record : records) {
      Record scanned = Record.scan(record);
      assertThat(scanned).as(record).isNotNull();
      assertThat(fields(scanned)).as(record).isEqualTo(jackson(record));
    }
  }

  @Test
  void escapesAndSpacingReadAsJacksonReadsThem() {
    for (String text : List.of(
        "{}", " { } ", "{\"line\":\"a\\\"b\\\\c\\/d\\n\\t\\r\\b\\f\\u00e9\\u0041\"}",
        "{ \"command\" : \"x\" , \"line\" : \"y\" }\r\n", "{\"line\":\"first\",\"line\":\"last\"}",
        "{\"line\":\"\"}", "{\"lin\\u0065\":\"escaped name\"}")) {
      Record scanned = Record.scan(text);
      assertThat(scanned).as(text).isNotNull();
      assertThat(fields(scanned)).as(text).isEqualTo(jackson(text));
    }
  }

  @Test
  void shapesItDoesNotHandleAreLeftToJackson() {
    for (String text : List.of(
        "[]", "\"line\"", "{\"line\":1}", "{\"line\":null,\"command\":\"x\"}", "{\"a\":{\"line\":\"x\"}}",
        "{\"line\":\"x\",}", "{\"line\":\"x\"} trailing", "{\"line\":\"\\ud83d\\ude00\"}", "{\"line\":\"\\x\"}",
        "{\"line\":\"\\u00zz\"}", "{\"line\":\"tab\there\"}", "{\"line\":\"open", "{'line':'x'}", "",
        "{\"line\":\"\\u１２３４\"}")) {
      assertThat(Record.scan(text)).as(text).isNull();
    }
  }

  @Test
  void mutatedRecordsNeverReadDifferently() throws IOException {
    int fast = 0;
    for (String t : Mangle.texts(fixtureRecords(), "{}[]\":,\\ \t\nu0aZ/é", 30_000, 7)) {
      Record scanned = Record.scan(t);
      if (scanned != null) {
        fast++;
        assertThat(fields(scanned)).as(t).isEqualTo(jackson(t));
      }
    }
    // the mutations must leave many records readable, or the comparison above proves little
    assertThat(fast).isGreaterThan(5_000);
  }
}
