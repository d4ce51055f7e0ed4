package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.ingest.RawTopicIngest;
import dev.knockwatch.testkit.RealShipper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's path "with your shipper", in a copy of the repository: {@code ./knockwatch up
 * --raw-topic knockwatch.raw} (the three ports chosen free, the probes off), the README's rsyslog
 * block run verbatim with the real rsyslog (Debian's, unpacked, as {@code rsyslogd} on the PATH),
 * then the README's "Try it": the off-role page and the retry warning it promises arrive through
 * rsyslog, the raw topic and the stage, never through the agent (which does not run).
 */
@Tag("integration")
class ShipperFirstRunTest {

  static final Duration START = Duration.ofMinutes(3);
  static final Duration ALERT = Duration.ofMinutes(2);

  @TempDir Path dir;

  @Test
  void upWithTheRawTopicAndRsyslogAsTheReadmeSaysPagesOnTheDemoCommand() throws Exception {
    Path checkout = Launched.copyOfRepository(dir.resolve("checkout"));
    int kafka = Launched.freePort();
    // rsyslogd as an installed rsyslog is found: the unpacked binary, with its libraries and modules
    Path root = RealShipper.unpacked();
    Path bin = Files.createDirectories(dir.resolve("bin"));
    Path rsyslogd = bin.resolve("rsyslogd");
    Files.writeString(rsyslogd, "#!/bin/sh\nLD_LIBRARY_PATH=" + root.resolve("usr/lib/x86_64-linux-gnu") + ":"
        + root.resolve("lib/x86_64-linux-gnu") + " exec " + root.resolve("usr/sbin/rsyslogd") + " -M "
        + root.resolve("usr/lib/x86_64-linux-gnu/rsyslog") + " \"$@\"\n");
    Files.setPosixFilePermissions(rsyslogd, PosixFilePermissions.fromString("rwxr-xr-x"));
    Path pid = checkout.resolve("var/rsyslog/pid");
    try (Launched up = Launched.start(checkout, dir.resolve("run"), Map.of(), "up", "--raw-topic", "knockwatch.raw",
        "--no-probes", "--kafka-port", String.valueOf(kafka), "--metrics-port", String.valueOf(Launched.freePort()),
        "--api-port", String.valueOf(Launched.freePort()))) {
      up.awaitLine("Ctrl-C to stop.", START);
      assertThat(up.out()).contains("  ingest   reading the raw lines your shipper puts on knockwatch.raw (paths under "
          + checkout.resolve("var/logs").toAbsolutePath().normalize());
      ReadmeBlocks.Block shipper = ReadmeBlocks.read().starting("sh", "mkdir -p var/logs var/rsyslog");
      ReadmeBlocks.Ran started = ReadmeBlocks.run(shipper, checkout, Map.of("PATH", bin + ":" + System.getenv("PATH"),
          "KNOCKWATCH_BOOTSTRAP_SERVERS", "127.0.0.1:" + kafka));
      assertThat(started.exit()).as(started.output()).isZero();
      try {
        ReadmeBlocks.Block tryIt = ReadmeBlocks.read().starting("sh", "mkdir -p var/logs/ci-runner-1");
        ReadmeBlocks.Ran ran = ReadmeBlocks.run(tryIt, checkout, Map.of());
        assertThat(ran.exit()).as(ran.output()).isZero();
        assertThat(up.awaitLine("ALERT [PAGE] off-role-host firing command=DemoCommandId000000001 ", ALERT))
            .contains("agent=ci-runner-1 role=ci host=evil.example:443");
        assertThat(up.awaitLine("ALERT [WARNING] persistent-retry firing command=DemoCommandId000000001 ", ALERT))
            .contains("count=5");
        // through the shipper and the stage: the stage's group read the six lines, and no agent tailed a file
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + kafka))) {
          long read = admin.listConsumerGroupOffsets(RawTopicIngest.DEFAULT_GROUP).partitionsToOffsetAndMetadata()
              .get(30, TimeUnit.SECONDS).entrySet().stream().filter(e -> e.getKey().topic().equals("knockwatch.raw"))
              .mapToLong(e -> e.getValue().offset()).sum();
          assertThat(read).as("raw lines the stage committed").isEqualTo(6);
        }
        assertThat(checkout.resolve("var/ingest/checkpoints.json")).doesNotExist();
      } finally {
        if (Files.exists(pid)) {
          new ProcessBuilder("kill", Files.readString(pid).strip()).start().waitFor();
        }
      }
      up.stop(Duration.ofSeconds(90));
    }
  }
}
