package dev.knockwatch.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class TestPortsTest {

  @Test
  void everyTiersForksHaveTheirOwnBlockBelowTheEphemeralRange() {
    int ephemeral = TestPorts.ephemeralStart();
    Set<Integer> ports = new HashSet<>();
    for (int tier = 0; tier < 3; tier++) {
      for (int fork = 1; fork <= 2; fork++) {
        int first = TestPorts.firstPort(ephemeral, TestPorts.block(tier, fork));
        assertThat(first).isGreaterThan(1024);
        IntStream.range(first, first + TestPorts.BLOCK).forEach(p ->
            assertThat(ports.add(p)).as("port %d in two blocks", p).isTrue());
      }
    }
    assertThat(ports).allSatisfy(p -> assertThat(p).isLessThan(ephemeral));
  }

  @Test
  void theForkIsReadFromWhatTheBuildSets() {
    assertThat(TestPorts.fork("fork 2")).isEqualTo(2);
    assertThat(TestPorts.fork("fork 1")).isEqualTo(1);
    assertThat(TestPorts.fork(null)).isEqualTo(1);
    assertThat(TestPorts.fork("fork ")).isEqualTo(1);
  }

  @Test
  void aPortIsHandedOutOnceAndATakenOneIsSkipped() throws Exception {
    int first = TestPorts.free();
    try (ServerSocket taken = new ServerSocket(first + 1)) {
      int second = TestPorts.free();
      assertThat(second).isNotEqualTo(first).isNotEqualTo(first + 1).isLessThan(TestPorts.ephemeralStart());
      try (ServerSocket s = new ServerSocket(second)) {
        assertThat(s.getLocalPort()).isEqualTo(second);
      }
    }
  }
}
