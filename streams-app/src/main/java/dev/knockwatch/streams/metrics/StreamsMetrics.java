package dev.knockwatch.streams.metrics;

import dev.knockwatch.events.AddressClass;
import dev.knockwatch.events.EventSources;
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
  public static final Counter EXACT_DUPLICATES = Counter.build()
      .name("knockwatch_streams_exact_duplicates_total")
      .help("Events equal to one of their command's last ones but for where they were read (a line written again, a copied file, a batch sent again): counted once.")
      .labelNames("source").register();
  public static final Counter STATE_CAPPED = Counter.build()
      .name("knockwatch_streams_state_capped_total")
      .help("Refusals a per-command bound kept out of a store (docs/RELIABILITY.md), by store: the command is flooding.")
      .labelNames("store").register();
  public static final Counter IN_ROLE = Counter.build()
      .name("knockwatch_streams_in_role_refusals_total")
      .help("Refusals of a host the agent's role allows: config drift, not an off-role page.")
      .labelNames("role").register();

  public static final Counter PROBE_RESULTS = Counter.build()
      .name("knockwatch_streams_probe_results_total")
      .help("Guard probe results read: refused=true the wall held, refused=false it did not (wall-breach).")
      .labelNames("refused").register();

  /** The reason classes, in the order of {@link #reasonClassIndex}. */
  static final String[] REASON_CLASSES = {"filesystem", "resolved-address", "opaque-tunnel", "not-on-allowlist",
      "proxy-auth", "syscall", "configured", "unknown"};

  /**
   * The reason of a refusal, as one word of a fixed set (the reason text itself is the sandbox's
   * and, for configured deny reasons, the operator's: never a label).
   */
  public static String reasonClass(ViolationEvent e) {
    return REASON_CLASSES[reasonClassIndex(e)];
  }

  static int reasonClassIndex(ViolationEvent e) {
    if (e.kind() == Kind.FILESYSTEM) {
      return 0;
    }
    String r = e.reason() == null ? "" : e.reason();
    if (r.startsWith("resolved to ")) {
      return 1;
    }
    if (r.contains("refuseOpaqueTunnels") || r.contains("does not tunnel")) {
      return 2;
    }
    if (r.equals("host is not on the allow list") || "blocked-by-allowlist".equals(e.proxyError())) {
      return 3;
    }
    if (r.contains("407") || r.contains("Proxy Authentication")) {
      return 4;
    }
    if (e.errno() != null) {
      return 5;
    }
    return r.isEmpty() && e.proxyError() == null ? 7 : 6;
  }

  /**
   * The per-refusal counter's children, looked up once per combination: by role, then by an index
   * made of the four enum-like labels (a labels() lookup, or a string key, per refusal would cost
   * more than the count). Not thread-safe: one per stream task.
   */
  public static final class RefusalCounters {
    private static final int SOURCES = EventSources.count() + 2;
    private static final int KINDS = Kind.values().length + 1;
    private static final int ADDRESSES = AddressClass.values().length + 1;
    private static final int SIZE = SOURCES * KINDS * REASON_CLASSES.length * ADDRESSES;

    private final java.util.Map<String, Counter.Child[]> byRole = new java.util.HashMap<>();

    public void inc(ViolationEvent e, String role) {
      Counter.Child[] children = byRole.computeIfAbsent(role, r -> new Counter.Child[SIZE]);
      int reason = reasonClassIndex(e);
      int i = ((EventSources.index(e.source()) * KINDS + ordinal(e.kind())) * REASON_CLASSES.length + reason) * ADDRESSES
          + ordinal(e.addressClass());
      Counter.Child c = children[i];
      if (c == null) {
        c = REFUSALS.labels(EventSources.label(e.source()), label(e.kind()), REASON_CLASSES[reason], label(e.addressClass()), role);
        children[i] = c;
      }
      c.inc();
    }

    private static int ordinal(Enum<?> v) {
      return v == null ? 0 : v.ordinal() + 1;
    }
  }

  /** An enum constant as its wire name ("cloud-metadata", "filesystem"), "none" for null. */
  public static String label(Enum<?> v) {
    return v == null ? "none" : v.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
  }

  private StreamsMetrics() {}
}
