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
      "100.64.0.1          | PRIVATE",
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
}
