package dev.knockwatch.streams;

import dev.knockwatch.events.Kind;
import dev.knockwatch.events.ViolationEvent;
import io.prometheus.client.Counter;

/** The streams app's Prometheus metrics; labels from fixed sets (rule ids come from the rules files). */
public final class StreamsMetrics {

  public static final Counter ALERTS = Counter.build()
      .name("knockwatch_streams_alerts_total").help("Alerts written (firing, updated, resolved), by rule, severity, status and mode (enforce or shadow).")
      .labelNames("rule", "severity", "status", "mode").register();
  public static final Counter LATE_EVENTS = Counter.build()
      .name("knockwatch_streams_late_events_total").help("Events that arrived after their window's grace period.")
      .labelNames("rule").register();
  public static final Counter REFUSALS = Counter.build()
      .name("knockwatch_streams_refusals_total")
      .help("Refusals counted, by source, kind, reason class, address class and the agent's role.")
      .labelNames("source", "kind", "reason_class", "address_class", "role").register();
  public static final Counter CROSSINGS = Counter.build()
      .name("knockwatch_streams_threshold_crossings_total")
      .help("Count rules' first crossings of their threshold (one per command, rule and window).")
      .labelNames("rule").register();

  public static final Counter DUPLICATES = Counter.build()
      .name("knockwatch_streams_cross_source_duplicates_total")
      .help("Refusals already seen from another log (same command, host and port within 2 s): counted once.")
      .labelNames("source").register();
  public static final Counter IN_ROLE = Counter.build()
      .name("knockwatch_streams_in_role_refusals_total")
      .help("Refusals of a host the agent's role allows: config drift, not an off-role page.")
      .labelNames("role").register();

  public static final Counter PROBE_RESULTS = Counter.build()
      .name("knockwatch_streams_probe_results_total")
      .help("Guard probe results read: refused=true the wall held, refused=false it did not (wall-breach).")
      .labelNames("refused").register();

  /**
   * The reason of a refusal, as one word of a fixed set (the reason text itself is the sandbox's
   * and, for configured deny reasons, the operator's: never a label).
   */
  public static String reasonClass(ViolationEvent e) {
    if (e.kind() == Kind.FILESYSTEM) {
      return "filesystem";
    }
    String r = e.reason() == null ? "" : e.reason();
    if (r.startsWith("resolved to ")) {
      return "resolved-address";
    }
    if (r.contains("refuseOpaqueTunnels") || r.contains("does not tunnel")) {
      return "opaque-tunnel";
    }
    if (r.equals("host is not on the allow list") || "blocked-by-allowlist".equals(e.proxyError())) {
      return "not-on-allowlist";
    }
    if (r.contains("407") || r.contains("Proxy Authentication")) {
      return "proxy-auth";
    }
    if (e.errno() != null) {
      return "syscall";
    }
    return r.isEmpty() && e.proxyError() == null ? "unknown" : "configured";
  }

  /**
   * The per-refusal counter's children, looked up once per combination (a labels() lookup per
   * refusal would cost more than the count). Not thread-safe: one per stream task.
   */
  public static final class RefusalCounters {
    private final java.util.Map<String, Counter.Child> children = new java.util.HashMap<>();
    private final StringBuilder key = new StringBuilder();

    public void inc(ViolationEvent e, String role) {
      String source = label(e.source());
      String kind = label(e.kind());
      String reason = reasonClass(e);
      String address = label(e.addressClass()); // ingest classified it, where it could
      key.setLength(0);
      key.append(source).append('|').append(kind).append('|').append(reason).append('|').append(address).append('|')
          .append(role);
      Counter.Child c = children.get(key.toString());
      if (c == null) {
        c = REFUSALS.labels(source, kind, reason, address, role);
        children.put(key.toString(), c);
      }
      c.inc();
    }
  }

  /** An enum constant as its wire name ("srt-violation", "cloud-metadata"), "none" for null. */
  public static String label(Enum<?> v) {
    return v == null ? "none" : v.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
  }

  private StreamsMetrics() {}
}
