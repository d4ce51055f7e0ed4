package dev.knockwatch.events;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class HostClassifierTest {

  @ParameterizedTest
  @CsvSource({
      "Example.COM., example.com",
      "[::1], ::1",
      "[2001:DB8:0:0:0:0:0:1], 2001:db8::1",
      "::ffff:127.0.0.1, 127.0.0.1",
      "93.184.215.14, 93.184.215.14",
      "bit.ly, bit.ly"})
  void hostsAreCanonical(String raw, String canonical) {
    assertThat(HostClassifier.canonical(raw)).isEqualTo(canonical);
  }

  @ParameterizedTest
  @CsvSource({
      "127.0.0.1, LOOPBACK",
      "::1, LOOPBACK",
      "169.254.169.254, CLOUD_METADATA",
      "169.254.1.1, LINK_LOCAL",
      "10.1.2.3, PRIVATE",
      "192.168.0.1, PRIVATE",
      "fd00::1, PRIVATE",
      "0.0.0.0, UNSPECIFIED",
      "224.0.0.1, MULTICAST",
      "255.255.255.255, BROADCAST",
      "93.184.215.14, PUBLIC"})
  void literalsAreClassified(String host, AddressClass expected) {
    assertThat(HostClassifier.classify(host)).contains(expected);
  }

  @ParameterizedTest
  @CsvSource({"example.com", "metadata.google.internal", "999.1.1.1", "ab:cd:zz"})
  void namesAndNonLiteralsAreNotClassified(String host) {
    assertThat(HostClassifier.classify(host)).isEmpty();
  }
}
