package dev.knockwatch.probes.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.AddressClass;
import dev.knockwatch.events.CommandId;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.SourceLine;
import dev.knockwatch.ingest.formats.proxy.CurlTranscriptParser;
import dev.knockwatch.ingest.formats.srt.SrtFormat;
import dev.knockwatch.ingest.formats.srt.SrtViolationParser;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Golden lines made by the real srt 0.0.83 (the probes' bridge, behind the network guard), read
 * by ingest's own parsers: the unbracketed IPv6 deny lines, and every reason of srt's resolved-address
 * guard that can be produced in a namespace holding only {@code lo}. The names resolve through an
 * {@code /etc/hosts} bind-mounted in a private mount namespace, so nothing is looked up outside.
 * ({@code one of this host's addresses} and {@code a non-loopback address} need interfaces or a
 * resolver this namespace does not have; SrtLineTest reads them from srt's source.)
 */
@Tag("integration")
class RealSrtDenyLinesTest {

  static SrtBridge bridge;
  @TempDir Path dir;

  @BeforeAll
  static void prepare() {
    bridge = RealSandbox.prepare(new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
  }

  record Seen(String host, Integer port, AddressClass addressClass, String reason) {}

  @Test
  void everyDenyShapeTheRealSrtWritesReadsAsItsHostPortAndClass() throws Exception {
    String hosts = String.join("\n",
        "127.0.0.1 localhost",
        "169.254.169.254 meta.allowed.test",
        "127.0.0.5 lo.allowed.test",
        "255.255.255.255 bc.allowed.test",
        "168.63.129.16 az.allowed.test",
        "fe80::1 v6.allowed.test",
        "224.0.0.1 mc.allowed.test",
        "0.0.0.0 zero.allowed.test",
        "10.1.2.3 intra.allowed.test",
        "10.9.9.9 dl.allowed.test", "");
    String settings = """
        { "network": { "allowedDomains": ["*.allowed.test"], "deniedDomains": ["10.9.9.9"],
                       "deniedResolvedAddresses": ["10.0.0.0/8"] },
          "filesystem": { "denyRead": ["~/.ssh"], "allowWrite": ["."], "denyWrite": [".env"] } }
        """;
    StringBuilder command = new StringBuilder();
    for (String name : List.of("meta", "lo", "bc", "az", "v6", "mc", "zero", "intra", "dl")) {
      command.append("curl -s --noproxy '' http://").append(name).append(".allowed.test/; ");
    }
    for (String url : List.of("http://[::1]:9/", "http://[fe80::1]:80/", "http://[::ffff:127.0.0.1]:8080/",
        "https://[2001:db8::7]:8443/")) {
      command.append("curl -s --noproxy '' '").append(url).append("'; ");
    }
    command.append("curl -sv --noproxy '' https://meta.allowed.test/");

    String id = CommandId.random();
    Path logs = dir.resolve("logs");
    Path work = Files.createDirectories(dir.resolve("work"));
    Files.writeString(dir.resolve("hosts"), hosts);
    Files.writeString(dir.resolve("settings.json"), settings);
    String inner = "mount --bind \"$0\" /etc/hosts && exec node \"$@\"";
    List<String> argv = new ArrayList<>(List.of("unshare", "--mount", "--", "sh", "-c", inner,
        dir.resolve("hosts").toString(), bridge.dir().resolve("bridge.mjs").toString(),
        "--settings", dir.resolve("settings.json").toString(), "--logs", logs.toString(), "--agent", "ci-runner-7",
        "--command-id", id, "--cwd", work.toString(), "--json", "-c", command.toString()));
    Process p = new ProcessBuilder(NetworkGuard.wrap(argv)).directory(work.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(120, TimeUnit.SECONDS)).as(out).isTrue();
    assertThat(p.exitValue()).as(out).isZero();

    Path base = logs.resolve("ci-runner-7");
    List<String> records = Files.readAllLines(base.resolve(id + SrtFormat.SUFFIX));
    assertThat(records.stream().map(r -> r.replaceAll(".*\"line\":\"([^\"]*)\".*", "$1")))
        .as("srt's own lines, kept as written").contains(
            "deny network-outbound ::1:9 (host is not on the allow list)",
            "deny network-outbound fe80::1:80 (host is not on the allow list)",
            "deny network-outbound ::ffff:7f00:1:8080 (host is not on the allow list)",
            "deny network-outbound 2001:db8::7:8443 (host is not on the allow list)",
            "deny network-outbound meta.allowed.test:80 (resolved to a link-local address)",
            "deny network-outbound dl.allowed.test:80 (resolved to a deny-listed address)");

    SrtViolationParser srt = new SrtViolationParser();
    List<Seen> seen = new ArrayList<>();
    long offset = 0;
    for (String r : records) {
      seen.addAll(events(srt.parse(line(id, id + SrtFormat.SUFFIX, offset, r))));
      offset += r.length() + 1;
    }
    assertThat(seen).containsExactly(
        new Seen("meta.allowed.test", 80, AddressClass.LINK_LOCAL, "resolved to a link-local address"),
        new Seen("lo.allowed.test", 80, AddressClass.LOOPBACK, "resolved to a loopback address"),
        new Seen("bc.allowed.test", 80, AddressClass.BROADCAST, "resolved to the broadcast address"),
        new Seen("az.allowed.test", 80, AddressClass.CLOUD_METADATA, "resolved to a cloud metadata address"),
        new Seen("v6.allowed.test", 80, AddressClass.LINK_LOCAL, "resolved to a link-local address"),
        new Seen("mc.allowed.test", 80, AddressClass.MULTICAST, "resolved to a multicast address"),
        new Seen("zero.allowed.test", 80, AddressClass.UNSPECIFIED, "resolved to an unspecified address"),
        new Seen("intra.allowed.test", 80, AddressClass.LISTED, "resolved to a listed address"),
        new Seen("dl.allowed.test", 80, AddressClass.DENY_LISTED, "resolved to a deny-listed address"),
        new Seen("::1", 9, AddressClass.LOOPBACK, "host is not on the allow list"),
        new Seen("fe80::1", 80, AddressClass.LINK_LOCAL, "host is not on the allow list"),
        // an IPv4-mapped address reads as the IPv4 address it carries, as srt's address.js reads it
        new Seen("127.0.0.1", 8080, AddressClass.LOOPBACK, "host is not on the allow list"),
        new Seen("2001:db8::7", 8443, AddressClass.RESERVED, "host is not on the allow list"),
        new Seen("meta.allowed.test", 443, AddressClass.LINK_LOCAL, "resolved to a link-local address"));

    // the proxy's 403 for the tunnel, as curl -v printed it: the class is in the status line
    List<String> stderr = Files.readAllLines(base.resolve(id + ".stderr.log"));
    assertThat(stderr).contains("< HTTP/1.1 403 resolved to a link-local address");
    CurlTranscriptParser curl = new CurlTranscriptParser().restatedByRecords();
    List<ViolationEvent> fromCurl = new ArrayList<>();
    offset = 0;
    for (String l : stderr) {
      Parsed parsed = curl.parse(line(id, id + ".stderr.log", offset, l));
      if (parsed instanceof Parsed.Events e) {
        fromCurl.addAll(e.events());
      }
      offset += l.getBytes(StandardCharsets.UTF_8).length + 1;
    }
    assertThat(fromCurl).as(String.join("\n", stderr)).singleElement().satisfies(e -> {
      assertThat(e.host()).isEqualTo("meta.allowed.test");
      assertThat(e.port()).isEqualTo(443);
      assertThat(e.addressClass()).isEqualTo(AddressClass.LINK_LOCAL);
      assertThat(e.proxyError()).isEqualTo("blocked-by-sandbox-runtime");
      assertThat(e.commandId()).isEqualTo(id);
    });
  }

  private static SourceLine line(String id, String name, long offset, String text) {
    return new SourceLine("ci-runner-7/" + name, offset, text, "ci-runner-7", id, "host-a", Instant.now());
  }

  private static List<Seen> events(Parsed parsed) {
    assertThat(parsed).isInstanceOf(Parsed.Events.class);
    return ((Parsed.Events) parsed).events().stream()
        .map(e -> new Seen(e.host(), e.port(), e.addressClass(), e.reason()))
        .collect(Collectors.toList());
  }
}
