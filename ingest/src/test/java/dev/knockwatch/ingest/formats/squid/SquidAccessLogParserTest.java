package dev.knockwatch.ingest.formats.squid;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.AddressClass;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.Rejection;
import dev.knockwatch.ingest.Settled;
import dev.knockwatch.ingest.spi.SourceLine;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Golden tests on real Squid 5.7 access logs of refused requests (samples/squid-5.7-*). */
class SquidAccessLogParserTest {

  static final Instant NOW = Instant.parse("2026-11-29T19:00:00Z");
  static final String ID = "xhfHytmXL-L6RsYw2CrSjA";

  static List<Parsed> parseFile(String name, String commandIdFromPath) throws IOException {
    String text;
    try (InputStream in = SquidAccessLogParserTest.class.getResourceAsStream("samples/squid-5.7-" + name)) {
      text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
    SquidAccessLogParser parser = new SquidAccessLogParser();
    List<Parsed> out = new ArrayList<>();
    long offset = 0;
    for (String line : text.lines().toList()) {
      out.add(Settled.of(parser.parse(new SourceLine("proxy-1/" + name, offset, line, "proxy-1", commandIdFromPath, "h", NOW)), NOW));
      offset += line.length() + 1;
    }
    return out;
  }

  static List<ViolationEvent> events(List<Parsed> parsed) {
    return parsed.stream().filter(p -> p instanceof Parsed.Events).map(p -> ((Parsed.Events) p).events().get(0)).toList();
  }

  static List<Parsed.Rejected> rejected(List<Parsed> parsed) {
    return parsed.stream().filter(p -> p instanceof Parsed.Rejected).map(p -> (Parsed.Rejected) p).toList();
  }

  @ParameterizedTest
  @ValueSource(strings = {"access-squid.log", "access-knock.log", "access-combined.log", "auth-access-squid.log",
      "auth-access-knock.log", "auth-access-combined.log", "authci-access-squid.log", "authci-access-knock.log",
      "authci-access-combined.log"})
  void everyLineOfEveryFormatIsRecognised(String file) throws IOException {
    List<Parsed> parsed = parseFile(file, ID);
    assertThat(rejected(parsed)).as("with an id from the file name, nothing is rejected").isEmpty();
    assertThat(events(parsed)).hasSize(parsed.size());
  }

  @Test
  void lineKOfEachFormatIsTheSameRefusal() throws IOException {
    for (String run : List.of("", "auth-", "authci-")) {
      List<String> squid = targets(parseFile(run + "access-squid.log", ID));
      assertThat(targets(parseFile(run + "access-knock.log", ID))).isEqualTo(squid);
      assertThat(targets(parseFile(run + "access-combined.log", ID))).isEqualTo(squid);
    }
  }

  static List<String> targets(List<Parsed> parsed) {
    return events(parsed).stream().map(e -> e.method() + " " + e.host() + ":" + e.port() + " " + e.reason()).toList();
  }

  @Test
  void theKnockFormatTakesTheCommandIdFromTheHeader() throws IOException {
    List<Parsed> parsed = parseFile("access-knock.log", null);
    assertThat(events(parsed)).hasSize(11).extracting(ViolationEvent::commandId).containsOnly(ID);
    assertThat(rejected(parsed)).extracting(Parsed.Rejected::code)
        .containsOnly(Rejection.MISSING_COMMAND_ID, Rejection.BAD_COMMAND_ID).hasSize(10);
    assertThat(rejected(parsed)).filteredOn(r -> r.code() == Rejection.BAD_COMMAND_ID).singleElement()
        .extracting(Parsed.Rejected::reason).asString()
        .startsWith("the X-Command-Id header \"spaced value \"quoted\" 100%\": commandId has a character outside");
  }

  @Test
  void theProxyUserCarriesTheIdWhenSquidKeptItsCase() throws IOException {
    List<ViolationEvent> e = events(parseFile("auth-access-squid.log", null));
    assertThat(e).isNotEmpty().extracting(ViolationEvent::commandId).containsOnly(ID);
    assertThat(events(parseFile("auth-access-combined.log", null))).hasSize(e.size());
  }

  @Test
  void aLowerCasedProxyUserIsNoIdAndNeverAnotherCommand() throws IOException {
    List<Parsed> parsed = parseFile("authci-access-squid.log", null);
    assertThat(events(parsed)).isEmpty();
    assertThat(rejected(parsed)).filteredOn(r -> r.reason().startsWith("the proxy user")).first()
        .extracting(Parsed.Rejected::reason).asString()
        .isEqualTo("the proxy user srt.eghmshl0bvhmluw2unnzdzjdclnqqq== does not decode to a command id"
            + " (Squid lower-cases user names unless auth_param basic casesensitive on)");
    // where the header also came, the header's id is used
    assertThat(events(parseFile("authci-access-knock.log", null))).extracting(ViolationEvent::commandId).containsOnly(ID);
  }

  @Test
  void fieldsOfTheCapturedLines() throws IOException {
    List<ViolationEvent> e = events(parseFile("access-squid.log", ID));
    assertThat(e.get(0).observedAt()).isEqualTo(Instant.parse("2026-11-29T18:54:41.417Z"));
    assertThat(e.get(0).url()).isEqualTo("http://example.com/");
    assertThat(e.get(2).action()).isEqualTo("http-connect");
    assertThat(e.get(2).host() + ":" + e.get(2).port()).isEqualTo("example.com:443");
    assertThat(e.get(9).addressClass()).isEqualTo(AddressClass.CLOUD_METADATA);
    assertThat(e.get(11).host() + ":" + e.get(11).port() + " " + e.get(11).addressClass()).isEqualTo("::1:8080 LOOPBACK");
    assertThat(e.get(14).host() + ":" + e.get(14).port()).isEqualTo("2001:db8::1:443");
    assertThat(e.get(0).reason()).isEqualTo("access denied by the proxy (TCP_DENIED/403)");
    assertThat(events(parseFile("access-combined.log", ID)).get(0).observedAt()).isEqualTo(Instant.parse("2026-11-29T18:54:41Z"));
    assertThat(events(parseFile("auth-access-squid.log", ID)).get(0).reason())
        .isEqualTo("proxy authentication required (TCP_DENIED/407)");
  }

  @Test
  void allowedRequestsAreSkippedAndCounted() {
    Parsed p = new SquidAccessLogParser().parse(new SourceLine("p/access.log", 0,
        "1795978481.417     12 127.0.0.1 TCP_TUNNEL/200 5120 CONNECT registry.npmjs.org:443 - HIER_DIRECT/104.16.1.35 -",
        "p", ID, "h", NOW));
    assertThat(p).isEqualTo(Parsed.skipped("allowed"));
  }

  @Test
  void aConfiguredLogformatReadsAnotherFieldOrder() {
    SquidAccessLogParser parser = new SquidAccessLogParser("%{X-Command-Id}>h %>Hs %rm %ru %ts.%03tu");
    Parsed p = parser.parse(new SourceLine("p/access.log", 0, ID + " 403 GET http://evil.test/?token=abc 1795978481.417",
        "p", null, "h", NOW));
    assertThat(p).isInstanceOf(Parsed.Events.class);
    ViolationEvent e = ((Parsed.Events) p).events().get(0);
    assertThat(e.commandId()).isEqualTo(ID);
    assertThat(e.url()).isEqualTo("http://evil.test/?token=[REDACTED]");
    assertThat(e.observedAt()).isEqualTo(Instant.parse("2026-11-29T18:54:41.417Z"));
  }

  @Test
  void aLineInNoKnownFormatIsRejected() {
    assertThat(new SquidAccessLogParser().parse(new SourceLine("p/access.log", 0, "garbage here", "p", ID, "h", NOW)))
        .isEqualTo(Parsed.rejected(Rejection.UNPARSEABLE, "not a Squid access log line in the squid, knock or combined format"));
  }

  @Test
  void squidsHeaderEncodingIsUndone() {
    assertThat(SquidAccessLogParser.percentDecode("spaced%20value%20%22quoted%22%20100%")).isEqualTo("spaced value \"quoted\" 100%");
  }
}
