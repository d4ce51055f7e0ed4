package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/WALLS.md's "netfilter (a host firewall)", in a copy of the repository, as root on
 * the real kernel: its sources file, {@code ./knockwatch up --sources var/netfilter.yaml}, then its
 * demo verbatim — Debian's nftables logging and refusing two ports in a fresh network namespace
 * holding only {@code lo}, the kernel's lines through {@code dmesg --follow-new -r}, ulogd2's JSON
 * records of NFLOG, a process as UID 65534 dialling each port six times — and both agents the
 * sources map that UID to page: off-role-host and persistent-retry, under their agents' keys, from
 * the kernel's lines and from ulogd2's records. Then its stop block puts the namespace and
 * the kernel's switch back.
 */
@Tag("integration")
class NetfilterJourneyTest {

  static final Duration START = Duration.ofMinutes(3);
  static final Duration ALERT = Duration.ofMinutes(2);
  static final String TOKEN = "netfilter-journey-token-0001";

  @TempDir Path dir;

  @Test
  void theKernelsAndUlogdsRefusalsOfAMappedUidPageForItsAgentsThroughUp() throws Exception {
    for (String tool : List.of("nft", "ulogd", "setpriv", "ip", "dmesg")) {
      assertThat(new ProcessBuilder("sh", "-c", "command -v " + tool).start().waitFor())
          .as("%s is installed (./knockwatch test installs nftables, ulogd2, ulogd2-json)", tool).isZero();
    }
    assertThat(new ProcessBuilder("id", "-u").start().getInputStream().readAllBytes()).asString()
        .as("the demo runs as root").startsWith("0");
    String switchBefore = Files.readString(Path.of("/proc/sys/net/netfilter/nf_log_all_netns")).strip();
    Path checkout = Launched.copyOfRepository(dir.resolve("checkout"));
    ReadmeBlocks readme = ReadmeBlocks.read("docs/WALLS.md");
    ReadmeBlocks.Ran sources = ReadmeBlocks.run(ReadmeBlocks.read().starting("sh", "mkdir -p var/kernel"), checkout,
        Map.of());
    assertThat(sources.exit()).as(sources.output()).isZero();
    int api = Launched.freePort();
    try (Launched up = Launched.start(checkout, dir.resolve("run"), Map.of("KNOCKWATCH_API_TOKEN", TOKEN), "up",
        "--sources", "var/netfilter.yaml", "--no-probes", "--kafka-port", String.valueOf(Launched.freePort()),
        "--metrics-port", String.valueOf(Launched.freePort()), "--api-port", String.valueOf(api))) {
      up.awaitLine("Ctrl-C to stop.", START);
      assertThat(up.out()).contains("and the sources of var/netfilter.yaml");
      ReadmeBlocks.Block stop = readme.starting("sh", "kill \"$(cat var/kernel/dmesg.pid)\"");
      try {
        ReadmeBlocks.Ran demo = ReadmeBlocks.run(readme.starting("sh", "sysctl -n net.netfilter.nf_log_all_netns"),
            checkout, Map.of());
        assertThat(demo.exit()).as(demo.output()).isZero();
        List<String> pages = new ArrayList<>();
        for (String agent : List.of("sandbox-runner-1", "sandbox-runner-2")) {
          pages.add(up.awaitLine("ALERT [PAGE] off-role-host firing command=agent:" + agent + " ", ALERT));
          pages.add(up.awaitLine("ALERT [WARNING] persistent-retry firing command=agent:" + agent + " ", ALERT));
        }
        assertThat(pages).allSatisfy(l -> assertThat(l).contains("role=default"));
        assertThat(pages.get(0)).contains("agent=sandbox-runner-1", "host=10.77.0.2:443");
        assertThat(pages.get(2)).contains("agent=sandbox-runner-2", "host=10.77.0.2:8443");
        // the agent's key is its timeline: its refusals say their command is unknown, and who the wall refused
        JsonNode timeline = Launched.command(api, TOKEN, "agent:sandbox-runner-1", 6);
        assertThat(timeline.path("commandId").asText()).isEqualTo("agent:sandbox-runner-1");
        assertThat(timeline.path("events").asInt()).isGreaterThanOrEqualTo(6);
        assertThat(timeline.path("sources").path("netfilter").asInt()).isEqualTo(timeline.path("events").asInt());
        assertThat(timeline.path("timeline")).isNotEmpty().allSatisfy(e -> {
          assertThat(e.path("source").asText()).isEqualTo("netfilter");
          assertThat(e.path("commandUnknown").asBoolean()).isTrue();
          assertThat(e.path("subject").path("identity").asText()).isEqualTo("uid=65534");
          assertThat(e.has("commandId")).isFalse();
        });
      } finally {
        ReadmeBlocks.Ran stopped = ReadmeBlocks.run(stop, checkout, Map.of());
        assertThat(stopped.exit()).as(stopped.output()).isZero();
      }
      assertThat(new String(new ProcessBuilder("ip", "netns", "list").start().getInputStream().readAllBytes()))
          .doesNotContain("agent-fw");
      assertThat(Files.readString(Path.of("/proc/sys/net/netfilter/nf_log_all_netns")).strip()).isEqualTo(switchBefore);
      up.stop(Duration.ofSeconds(90));
    }
  }
}
