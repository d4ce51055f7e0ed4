package dev.knockwatch.streams.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.AddressClass;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.ViolationEvent;
import io.prometheus.client.CollectorRegistry;
import org.junit.jupiter.api.Test;

class StreamsMetricsTest {

  static ViolationEvent.Builder event() {
    return ViolationEvent.builder().commandId("StreamsMetricsTestCmd01").source("srt-violation").kind(Kind.NETWORK)
        .host("evil.example").port(443);
  }

  @Test
  void everyReasonFallsIntoOneWordOfAFixedSet() {
    assertThat(StreamsMetrics.reasonClass(event().reason("host is not on the allow list").build())).isEqualTo("not-on-allowlist");
    assertThat(StreamsMetrics.reasonClass(event().source("proxy-403").proxyError("blocked-by-allowlist").build()))
        .isEqualTo("not-on-allowlist");
    assertThat(StreamsMetrics.reasonClass(event().reason("resolved to a loopback address / a link-local address").build()))
        .isEqualTo("resolved-address");
    assertThat(StreamsMetrics.reasonClass(event().reason("refuseOpaqueTunnels").build())).isEqualTo("opaque-tunnel");
    assertThat(StreamsMetrics.reasonClass(event().reason("407 Proxy Authentication Required").build())).isEqualTo("proxy-auth");
    assertThat(StreamsMetrics.reasonClass(event().source("strace").errno("ENETUNREACH").build())).isEqualTo("syscall");
    assertThat(StreamsMetrics.reasonClass(event().kind(Kind.FILESYSTEM).path("/home/a/.bashrc").build())).isEqualTo("filesystem");
    // the operator's own deny text, or an agent's: never a label of its own
    assertThat(StreamsMetrics.reasonClass(event().reason("URL shorteners are blocked; use the full destination URL").build()))
        .isEqualTo("configured");
    assertThat(StreamsMetrics.reasonClass(event().reason("<script>" + "x".repeat(500)).build())).isEqualTo("configured");
    assertThat(StreamsMetrics.reasonClass(event().build())).isEqualTo("unknown");
  }

  @Test
  void theRefusalCounterCountsByItsFiveBoundedLabels() {
    StreamsMetrics.RefusalCounters c = new StreamsMetrics.RefusalCounters();
    String[] names = {"source", "kind", "reason_class", "address_class", "role"};
    String[] values = {"srt-violation", "network", "resolved-address", "cloud-metadata", "metrics-test-role"};
    Double before = CollectorRegistry.defaultRegistry.getSampleValue("knockwatch_streams_refusals_total", names, values);
    ViolationEvent e = event().reason("resolved to a cloud metadata address").addressClass(AddressClass.CLOUD_METADATA).build();
    c.inc(e, "metrics-test-role");
    c.inc(e, "metrics-test-role");
    assertThat(CollectorRegistry.defaultRegistry.getSampleValue("knockwatch_streams_refusals_total", names, values))
        .isEqualTo((before == null ? 0 : before) + 2);
    assertThat(CollectorRegistry.defaultRegistry.getSampleValue("knockwatch_streams_refusals_total", names,
        new String[] {"srt-violation", "network", "not-on-allowlist", "none", "metrics-test-role"})).isNull();
  }
}
