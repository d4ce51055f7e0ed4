package dev.knockwatch.ingest.formats.srt;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.AddressClass;
import dev.knockwatch.events.HostClassifier;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Every shape of deny line srt 0.0.83 writes, as its source writes it: dist/sandbox/sandbox-manager.js
 * line 458 ({@code deny network-outbound ${host}:${port} (${reason})}: the host as the client
 * spelled it, IPv6 without brackets), line 730 ({@code deny http-request ${method} ${target} (${reason})}),
 * line 760 ({@code deny socks-tunnel ${host}:${port} (refuseOpaqueTunnels)}); dist/sandbox/
 * linux-violation-monitor.js line 77 ({@code deny ${syscall} ${path}}). srt turns control bytes in
 * a line into spaces, so a host can hold them.
 */
class SrtLineTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "deny network-outbound example.com:443 (host is not on the allow list) | network-outbound | example.com | 443 | host is not on the allow list",
      "deny network-outbound ::1:443 (resolved to a loopback address)        | network-outbound | ::1 | 443 | resolved to a loopback address",
      "deny network-outbound fe80::1:80 (host is not on the allow list)      | network-outbound | fe80::1 | 80 | host is not on the allow list",
      "deny network-outbound ::ffff:127.0.0.1:8080 (host is not on the allow list) | network-outbound | 127.0.0.1 | 8080 | host is not on the allow list",
      "deny network-outbound 2001:db8::1:22 (host is not on the allow list)  | network-outbound | 2001:db8::1 | 22 | host is not on the allow list",
      "deny network-outbound [::1]:443 (host is not on the allow list)       | network-outbound | ::1 | 443 | host is not on the allow list",
      "deny network-outbound pastebin.com .api.github.com:443 (malformed host) | network-outbound | pastebin.com .api.github.com | 443 | malformed host",
      "deny network-outbound a (b) c.test:443 (URL shorteners are blocked (use the full URL)) | network-outbound | a (b) c.test | 443 | URL shorteners are blocked (use the full URL)",
      "deny socks-tunnel ::1:1080 (refuseOpaqueTunnels)                      | socks-tunnel | ::1 | 1080 | refuseOpaqueTunnels",
      "deny http-request GET http://[::1]:8080/admin?… (filterRequest)       | http-request | ::1 | 8080 | filterRequest",
      "deny http-request CONNECT fe80::1:443 (tlsTerminate)                  | http-request | fe80::1 | 443 | tlsTerminate",
      "deny http-request POST https://evil.test/up (body too large)          | http-request | evil.test | 443 | body too large"})
  void everyNetworkShapeReadsItsHostPortAndReason(String line, String action, String host, int port, String reason) {
    SrtLine l = SrtLine.parse(line).orElseThrow(() -> new AssertionError("not read: " + line));
    assertThat(l.action()).isEqualTo(action);
    assertThat(HostClassifier.canonical(l.host())).isEqualTo(host);
    assertThat(l.port()).isEqualTo(port);
    assertThat(l.reason()).isEqualTo(reason);
  }

  /** srt 0.0.83, dist/sandbox/resolved-address-guard.js: DENIED_CLASSES (lines 57-64) and REASON_ORDER (lines 66-73). */
  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "resolved to a loopback address          | LOOPBACK",
      "resolved to an unspecified address      | UNSPECIFIED",
      "resolved to a link-local address        | LINK_LOCAL",
      "resolved to a multicast address         | MULTICAST",
      "resolved to the broadcast address       | BROADCAST",
      "resolved to a cloud metadata address    | CLOUD_METADATA",
      "resolved to a deny-listed address       | DENY_LISTED",
      "resolved to a listed address            | LISTED",
      "resolved to one of this host's addresses | THIS_HOST",
      "resolved to a non-loopback address      | NON_LOOPBACK",
      "resolved to an unparsable address       | UNKNOWN",
      "resolved to a deny-listed address / a loopback address / a cloud metadata address | CLOUD_METADATA",
      "resolved to a listed address / one of this host's addresses | THIS_HOST"})
  void everyReasonPhraseOfSrtNamesItsAddressClass(String reason, AddressClass expected) {
    assertThat(SrtLine.parse("deny network-outbound allowed.test:443 (" + reason + ")").map(SrtLine::addressClass))
        .contains(expected);
  }

  @Test
  void whatIsNoDenyLineIsNotRead() {
    assertThat(SrtLine.parse("deny network-outbound example.com (no port)")).isEmpty();
    assertThat(SrtLine.parse("deny network-outbound example.com:99999 (bad port)")).isEmpty();
    assertThat(SrtLine.parse("deny network-outbound example.com:443 no reason")).isEmpty();
    assertThat(SrtLine.parse("permit network-outbound example.com:443 (x)")).isEmpty();
    assertThat(SrtLine.parse("deny openat /home/agent/.bashrc")).map(SrtLine::path).isEqualTo(Optional.of("/home/agent/.bashrc"));
  }
}
