package dev.knockwatch.ingest.formats.squid;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.ingest.Mangle;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The scan that reads most lines must read them as the logformat's pattern does. */
class SquidLogFormatTest {

  static final List<String> FILES = List.of("access-squid.log", "access-knock.log", "access-combined.log",
      "auth-access-squid.log", "auth-access-knock.log", "auth-access-combined.log");

  static final List<SquidLogFormat> FORMATS = List.of(SquidLogFormat.of("knock"), SquidLogFormat.of("squid"),
      SquidLogFormat.of("combined"),
      // quoted fields, a bracketed time, a signed elapsed time and literal text between fields
      SquidLogFormat.of("%>a [%tl] \"%rm %ru\" %>Hs %<st id=%{X-Command-Id}>h %tr:%Ss"),
      SquidLogFormat.of("%ts.%03tu|%>a|%un|%Sh/%<a \"%{User-Agent}>h\""));

  static List<String> fixtureLines() throws IOException {
    List<String> lines = new ArrayList<>();
    for (String file : FILES) {
      try (InputStream in = SquidLogFormatTest.class.getResourceAsStream("samples/squid-5.7-" + file)) {
        lines.addAll(new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList());
      }
    }
    lines.add("1795978485.769      0 127.0.0.1 TCP_DENIED/403 3495 CONNECT example.com:443 - bench00000000000000042 HIER_NONE/- text/html");
    lines.add("10.0.0.7 [29/Nov/2026:18:54:41 +0000] \"GET http://example.com/a b\" 403 - id=abc -12:TCP_DENIED");
    lines.add("1795978481.417|127.0.0.1|srt.abc==|HIER_NONE/- \"curl/7.88.1\"");
    return lines;
  }

  private static Optional<List<String>> values(SquidLogFormat format, Optional<SquidLogFormat.Fields> fields) {
    return fields.map(format::values);
  }

  @Test
  void theScanFindsWhatThePatternFindsInEveryCapturedLine() throws IOException {
    for (String line : fixtureLines()) {
      for (SquidLogFormat format : FORMATS) {
        assertThat(values(format, format.read(line))).as(format.format() + " on " + line)
            .isEqualTo(values(format, format.readByPattern(line)));
      }
    }
  }

  @Test
  void theScanFindsWhatThePatternFindsInMangledLines() throws IOException {
    int matched = 0;
    for (String text : Mangle.texts(fixtureLines(), "  \t\"[]-/.:_=|aZ09%", 30_000, 7)) {
      for (SquidLogFormat format : FORMATS) {
        Optional<List<String>> byPattern = values(format, format.readByPattern(text));
        assertThat(values(format, format.read(text))).as(format.format() + " on " + text).isEqualTo(byPattern);
        matched += byPattern.isPresent() ? 1 : 0;
      }
    }
    assertThat(matched).as("enough mangled lines still fit a format to compare their fields").isGreaterThan(10_000);
  }

  @Test
  void theSquidAndKnockFormatsReadTheirLinesWithoutThePattern() throws IOException {
    SquidLogFormat squid = SquidLogFormat.of("squid");
    SquidLogFormat knock = SquidLogFormat.of("knock");
    for (String file : List.of("access-squid.log", "auth-access-squid.log", "access-knock.log", "auth-access-knock.log")) {
      SquidLogFormat format = file.contains("knock") ? knock : squid;
      try (InputStream in = SquidLogFormatTest.class.getResourceAsStream("samples/squid-5.7-" + file)) {
        for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList()) {
          assertThat(format.readsWithoutPattern(line)).as(file + ": " + line).isTrue();
        }
      }
    }
  }
}
