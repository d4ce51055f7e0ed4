package dev.knockwatch.events;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Every form a sandboxed agent can write a host in, and what enforcement must see. */
class HostClassifierTest {

  @ParameterizedTest(name = "{0} -> {1}")
  @CsvSource(delimiter = '|', value = {
      "Example.COM.        | example.com",
      "example.com..       | example.com",
      "bücher.de           | xn--bcher-kva.de",
      "BÜCHER.de           | xn--bcher-kva.de",
      "127.0.0.1           | 127.0.0.1",
      "255.255.255.255     | 255.255.255.255",
      "010.0.0.1           | 8.0.0.1",
      "192.168.001.010     | 192.168.1.8",
      "127.1               | 127.0.0.1",
      "127.0.1             | 127.0.0.1",
      "2130706433          | 127.0.0.1",
      "0x7f000001          | 127.0.0.1",
      "0x7f.1              | 127.0.0.1",
      "0177.0.0.1          | 127.0.0.1",
      "0251.0376.0251.0376 | 169.254.169.254",
      "0xa9.0xfe.0xa9.0xfe | 169.254.169.254",
      "2852039166          | 169.254.169.254",
      "[::1]               | ::1",
      "::ffff:127.0.0.1    | 127.0.0.1",
      "[::FFFF:7f00:1]     | 127.0.0.1",
      "2001:DB8:0:0:0:0:0:1 | 2001:db8::1",
      "64:ff9b::a9fe:a9fe  | 64:ff9b::a9fe:a9fe",
      "fd00:ec2:0:0:0:0:0:254 | fd00:ec2::254",
      "256.1.1.1           | 256.1.1.1",
      "1.2.3.4.5           | 1.2.3.4.5",
      "0x.example          | 0x.example"})
  void hostsAreCanonical(String raw, String canonical) {
    assertThat(HostClassifier.canonical(raw)).isEqualTo(canonical);
  }

  @ParameterizedTest(name = "{0} is {1}")
  @CsvSource(delimiter = '|', value = {
      "127.0.0.1           | LOOPBACK",
      "127.1               | LOOPBACK",
      "2130706433          | LOOPBACK",
      "0x7f.1              | LOOPBACK",
      "::1                 | LOOPBACK",
      "::ffff:127.0.0.1    | LOOPBACK",
      "localhost           | LOOPBACK",
      "LOCALHOST.          | LOOPBACK",
      "app.localhost       | LOOPBACK",
      "169.254.169.254     | CLOUD_METADATA",
      "2852039166          | CLOUD_METADATA",
      "0251.0376.0251.0376 | CLOUD_METADATA",
      "64:ff9b::a9fe:a9fe  | CLOUD_METADATA",
      "::ffff:169.254.169.254 | CLOUD_METADATA",
      "fd00:ec2::254       | CLOUD_METADATA",
      "metadata.google.internal | CLOUD_METADATA",
      "Metadata.Google.Internal. | CLOUD_METADATA",
      "100.100.100.200     | CLOUD_METADATA",
      "169.254.170.2       | CLOUD_METADATA",
      "169.254.1.1         | LINK_LOCAL",
      "fe80::1             | LINK_LOCAL",
      "10.1.2.3            | PRIVATE",
      "172.16.0.1          | PRIVATE",
      "172.31.255.255      | PRIVATE",
      "192.168.0.1         | PRIVATE",
      "100.64.0.1          | CGNAT",
      "fd12:3456::1        | PRIVATE",
      "0.0.0.0             | UNSPECIFIED",
      "0                   | UNSPECIFIED",
      "::                  | UNSPECIFIED",
      "224.0.0.1           | MULTICAST",
      "ff02::1             | MULTICAST",
      "255.255.255.255     | BROADCAST",
      "93.184.215.14       | PUBLIC",
      "172.32.0.1          | PUBLIC",
      "64:ff9b::5db8:d70e  | PUBLIC",
      "2001:4860::8888     | PUBLIC"})
  void hostsAreClassified(String host, AddressClass expected) {
    assertThat(HostClassifier.classify(host)).contains(expected);
  }

  @ParameterizedTest
  @CsvSource({"example.com", "loopback-alias.test", "999.1.1.1", "1.2.3.256", "1..2.3", "ab:cd:zz", "1.2.3.4.5"})
  void namesAndNonAddressesAreLeftToTheSandbox(String host) {
    assertThat(HostClassifier.classify(host)).isEmpty();
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "example.com:443     | example.com | 443",
      "EXAMPLE.com.:80     | example.com | 80",
      "[::1]:8080          | ::1         | 8080",
      "[2001:db8::1]:443   | 2001:db8::1 | 443",
      "127.1:22            | 127.0.0.1   | 22",
      "::1                 | ::1         | ",
      "example.com         | example.com | "})
  void targetsSplitIntoHostAndPort(String target, String host, Integer port) {
    assertThat(HostClassifier.hostPort(target)).contains(new HostClassifier.HostPort(host, port));
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {"example.com:99999", "example.com:http", "[::1", "[::1]x", ":443", "''"})
  void badTargetsAreNotSplit(String target) {
    assertThat(HostClassifier.hostPort(target)).isEmpty();
  }

  @org.junit.jupiter.api.Test
  void hostileCharactersNeverSurvive() {
    assertThat(HostClassifier.canonical("evil\u202e.test\r\n")).isEqualTo("evil .test");
    assertThat(HostClassifier.canonical("a".repeat(1000))).hasSizeLessThanOrEqualTo(HostClassifier.MAX_HOST_CHARS + 3);
  }

  /**
   * Each special-purpose range by its first and last address (IANA's IPv4 and IPv6
   * Special-Purpose Address Registries, the IPv6 Address Space registry), the addresses just
   * outside, srt's cloud metadata endpoints, and the IPv6 forms that carry an IPv4 address (srt's
   * embeddedIPv4: mapped, compatible, translated, NAT64, 6to4), written out here by hand.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "0.0.0.0           | 0.255.255.255      | UNSPECIFIED",
      "10.0.0.0          | 10.255.255.255     | PRIVATE",
      "100.64.0.0        | 100.127.255.255    | CGNAT",
      "127.0.0.0         | 127.255.255.255    | LOOPBACK",
      "169.254.0.0       | 169.254.255.255    | LINK_LOCAL",
      "172.16.0.0        | 172.31.255.255     | PRIVATE",
      "192.0.0.0         | 192.0.0.191        | RESERVED",
      "192.0.2.0         | 192.0.2.255        | RESERVED",
      "192.88.99.0       | 192.88.99.255      | RESERVED",
      "192.168.0.0       | 192.168.255.255    | PRIVATE",
      "198.18.0.0        | 198.19.255.255     | RESERVED",
      "198.51.100.0      | 198.51.100.255     | RESERVED",
      "203.0.113.0       | 203.0.113.255      | RESERVED",
      "224.0.0.0         | 239.255.255.255    | MULTICAST",
      "240.0.0.0         | 255.255.255.254    | RESERVED",
      "255.255.255.255   | 255.255.255.255    | BROADCAST",
      "9.255.255.255     | 11.0.0.0           | PUBLIC",
      "100.63.255.255    | 100.128.0.0        | PUBLIC",
      "172.15.255.255    | 172.32.0.0         | PUBLIC",
      "198.17.255.255    | 198.20.0.0         | PUBLIC",
      "223.255.255.255   | 1.1.1.1            | PUBLIC",
      "169.254.169.254   | 169.254.170.2      | CLOUD_METADATA",
      "169.254.170.23    | 100.100.100.200    | CLOUD_METADATA",
      "168.63.129.16     | 192.0.0.192        | CLOUD_METADATA",
      "fd00:ec2::        | fd00:ec2:ffff:ffff:ffff:ffff:ffff:ffff | CLOUD_METADATA",
      "fd00:ec2::254     | fd00:ec2::23       | CLOUD_METADATA",
      "fd20:ce::254      | fd00:c1::a9fe:a9fe | CLOUD_METADATA",
      "fd00:42::42       | fd00:a9fe:a9fe::1  | CLOUD_METADATA",
      "fd00:100::100:200 | fd00:100::100:200  | CLOUD_METADATA",
      "::                | ::                 | UNSPECIFIED",
      "::1               | ::1                | LOOPBACK",
      "100::             | 100::ffff:ffff:ffff:ffff | RESERVED",
      "2001:db8::        | 2001:db8:ffff:ffff:ffff:ffff:ffff:ffff | RESERVED",
      "2001::            | 2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff | RESERVED",
      "3fff::            | 3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff | RESERVED",
      "5f00::            | 5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff | RESERVED",
      "fc00::            | fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff | PRIVATE",
      "fe80::            | febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff | LINK_LOCAL",
      "fec0::            | feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff | PRIVATE",
      "ff00::            | ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff | MULTICAST",
      "2001:200::        | 2606:4700::1111    | PUBLIC",
      "4000::            | 1::                | RESERVED",
      "::ffff:127.0.0.1  | ::127.0.0.1        | LOOPBACK",
      "::ffff:0:127.0.0.1 | 64:ff9b::7f00:1   | LOOPBACK",
      "64:ff9b:1::7f00:1 | 2002:7f00:1::      | LOOPBACK",
      "2002:a9fe:a9fe::  | 64:ff9b::a9fe:a9fe | CLOUD_METADATA",
      "::ffff:10.0.0.1   | 2002:c0a8:101::    | PRIVATE",
      "::ffff:8.8.8.8    | 2002:808:808::     | PUBLIC"})
  void theSpecialPurposeRangesTheirEndsAndTheEmbeddedIpv4Forms(String first, String last, AddressClass type) {
    assertThat(HostClassifier.classify(first)).as(first).contains(type);
    assertThat(HostClassifier.classify(last)).as(last).contains(type);
  }
}
