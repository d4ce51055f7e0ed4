package dev.knockwatch.ingest.srt;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.AddressClass;
import dev.knockwatch.events.Kind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SrtLineTest {

  @Test
  void networkOutbound() {
    SrtLine l = SrtLine.parse("deny network-outbound example.com:80 (host is not on the allow list)").orElseThrow();
    assertThat(l.kind()).isEqualTo(Kind.NETWORK);
    assertThat(l.action()).isEqualTo("network-outbound");
    assertThat(l.host()).isEqualTo("example.com");
    assertThat(l.port()).isEqualTo(80);
    assertThat(l.reason()).isEqualTo("host is not on the allow list");
    assertThat(l.addressClass()).isNull();
  }

  @Test
  void aConfiguredDenyReasonIsKeptWhole() {
    SrtLine l = SrtLine.parse("deny network-outbound bit.ly:443 (URL shorteners are blocked; use the full destination URL)")
        .orElseThrow();
    assertThat(l.reason()).isEqualTo("URL shorteners are blocked; use the full destination URL");
  }

  @Test
  void httpRequestWithHostAndPort() {
    SrtLine l = SrtLine.parse("deny http-request CONNECT loopback-alias.test:8443 (this proxy does not tunnel CONNECTs it cannot inspect)")
        .orElseThrow();
    assertThat(l.action()).isEqualTo("http-request");
    assertThat(l.method()).isEqualTo("CONNECT");
    assertThat(l.host()).isEqualTo("loopback-alias.test");
    assertThat(l.port()).isEqualTo(8443);
    assertThat(l.url()).isNull();
  }

  @Test
  void httpRequestWithAUrlTakesTheSchemesDefaultPort() {
    SrtLine l = SrtLine.parse("deny http-request GET https://api.example.com/v1/x?… (host is not on the allow list)")
        .orElseThrow();
    assertThat(l.host()).isEqualTo("api.example.com");
    assertThat(l.port()).isEqualTo(443);
    assertThat(l.url()).isEqualTo("https://api.example.com/v1/x?…");
  }

  @Test
  void socksTunnel() {
    SrtLine l = SrtLine.parse("deny socks-tunnel example.com:443 (refuseOpaqueTunnels)").orElseThrow();
    assertThat(l.action()).isEqualTo("socks-tunnel");
    assertThat(l.reason()).isEqualTo("refuseOpaqueTunnels");
  }

  @Test
  void filesystemDenialHasAPathAndNoReason() {
    SrtLine l = SrtLine.parse("deny openat /home/agent/work/.git/hooks/pre-commit").orElseThrow();
    assertThat(l.kind()).isEqualTo(Kind.FILESYSTEM);
    assertThat(l.action()).isEqualTo("openat");
    assertThat(l.path()).isEqualTo("/home/agent/work/.git/hooks/pre-commit");
    assertThat(l.host()).isNull();
  }

  @Test
  void resolvedClassesAreRead_theMostDangerousWinsWhenSeveral() {
    assertThat(SrtLine.addressClassOf("resolved to a loopback address")).isEqualTo(AddressClass.LOOPBACK);
    assertThat(SrtLine.addressClassOf("resolved to a link-local address")).isEqualTo(AddressClass.LINK_LOCAL);
    assertThat(SrtLine.addressClassOf("resolved to a cloud metadata address")).isEqualTo(AddressClass.CLOUD_METADATA);
    assertThat(SrtLine.addressClassOf("resolved to a private address / a cloud metadata address"))
        .isEqualTo(AddressClass.CLOUD_METADATA);
    assertThat(SrtLine.addressClassOf("host is not on the allow list")).isNull();
  }

  @Test
  void anIpv6TargetLosesItsBracketsAndHostsAreCanonical() {
    SrtLine l = SrtLine.parse("deny network-outbound [::1]:8080 (resolved to a loopback address)").orElseThrow();
    assertThat(l.host()).isEqualTo("::1");
    assertThat(SrtLine.parse("deny network-outbound EXAMPLE.com.:443 (x)").orElseThrow().host()).isEqualTo("example.com");
    assertThat(l.port()).isEqualTo(8080);
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "allow network-outbound example.com:80 (ok)",
      "deny network-outbound example.com (no port)",
      "deny network-outbound example.com:99999 (port out of range)",
      "deny network-outbound ::1:80 (bare ipv6)",
      "deny openat relative/path",
      ""})
  void otherShapesAreNotParsed(String line) {
    assertThat(SrtLine.parse(line)).isEmpty();
  }
}
