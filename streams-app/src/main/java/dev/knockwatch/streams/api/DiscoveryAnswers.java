package dev.knockwatch.streams.api;

import static dev.knockwatch.streams.api.Answers.intParam;
import static dev.knockwatch.streams.api.Answers.send;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import dev.knockwatch.events.Durations;
import dev.knockwatch.events.Glob;
import dev.knockwatch.events.Json;
import dev.knockwatch.streams.discover.Allowlist;
import dev.knockwatch.streams.discover.Buckets;
import dev.knockwatch.streams.discover.DiscoverProcessor;
import dev.knockwatch.streams.discover.HourOverview;
import dev.knockwatch.streams.discover.Overview;
import dev.knockwatch.streams.discover.RoleHour;
import dev.knockwatch.streams.rules.Policy;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.kafka.streams.state.ReadOnlyKeyValueStore;

/**
 * The query API's discovery routes, {@code /api/v1/allowlist} and {@code /api/v1/overview}: this
 * instance's hourly buckets ({@link Buckets}), every other instance's as it sends them, merged here.
 */
final class DiscoveryAnswers {

  /** Each local partition's store of a name (as {@link QueryApi} reads them: a partition still restoring is a 503). */
  interface Stores {
    <V> List<ReadOnlyKeyValueStore<String, V>> of(String name);
  }

  private final Peers peers;
  private final Stores stores;
  private final Supplier<Policy> policy;

  DiscoveryAnswers(Peers peers, Stores stores, Supplier<Policy> policy) {
    this.peers = peers;
    this.stores = stores;
    this.policy = policy;
  }

  /**
   * Per role, the refused destinations of a range (default: the last 7 days) with their counts and
   * risks ({@link Allowlist}): {@code role}, {@code agent} (a glob), {@code since} (an instant or a
   * duration back from now, e.g. {@code 7d}), {@code until}, {@code limit} per role. Another
   * instance is asked for its buckets, and every part is merged here.
   */
  void allowlist(HttpExchange ex, Map<String, String> q) throws IOException {
    Instant[] range = range(q, Duration.ofDays(7));
    int limit = intParam(q, "limit", 50);
    String role = blankToNull(q.get("role"));
    String agent = blankToNull(q.get("agent"));
    List<RoleHour> buckets = new ArrayList<>(Buckets.read(stores.<RoleHour>of(DiscoverProcessor.ROLE_HOURS), range[0], range[1]));
    if (Peers.forwarded(ex)) {
      ObjectNode out = Json.MAPPER.createObjectNode();
      out.set("buckets", Json.MAPPER.valueToTree(Buckets.encodeRoleHours(buckets)));
      send(ex, 200, out);
      return;
    }
    peers.fromOthers(ex, "buckets").forEach(b -> buckets.add(Buckets.roleHour(b.asText())));
    ObjectNode out = Json.MAPPER.createObjectNode();
    out.put("since", range[0].toString()).put("until", range[1].toString());
    out.set("roles", Json.MAPPER.valueToTree(Allowlist.suggest(buckets, policy.get(), role,
        agent == null ? null : Glob.of(agent), range[0], range[1], limit)));
    send(ex, 200, out);
  }

  /** The console's overview of a range (default: the last 24 hours; {@code top} of each list, default 10). */
  void overview(HttpExchange ex, Map<String, String> q) throws IOException {
    Instant[] range = range(q, Duration.ofHours(24));
    int top = intParam(q, "top", 10);
    List<HourOverview> hours = new ArrayList<>(Buckets.read(stores.<HourOverview>of(DiscoverProcessor.OVERVIEW), range[0], range[1]));
    List<RoleHour> roleHours = new ArrayList<>(Buckets.read(stores.<RoleHour>of(DiscoverProcessor.ROLE_HOURS), range[0], range[1]));
    if (Peers.forwarded(ex)) {
      ObjectNode out = Json.MAPPER.createObjectNode();
      out.set("hours", Json.MAPPER.valueToTree(Buckets.encodeOverviews(hours)));
      out.set("roleHours", Json.MAPPER.valueToTree(Buckets.encodeRoleHours(roleHours)));
      send(ex, 200, out);
      return;
    }
    for (JsonNode b : peers.fromOthers(ex, "hours")) {
      hours.add(Buckets.overview(b.asText()));
    }
    // each peer is asked twice (once per field): the overview is read every 5 s at most, by a person
    peers.fromOthers(ex, "roleHours").forEach(b -> roleHours.add(Buckets.roleHour(b.asText())));
    send(ex, 200, Json.MAPPER.valueToTree(Overview.of(hours, roleHours, range[0], range[1], top)));
  }

  /** [since, until) from the query: an instant, or {@code since} as a duration back from now; at most the buckets' 8 days. */
  private static Instant[] range(Map<String, String> q, Duration dflt) {
    Instant now = Instant.now();
    Instant until = q.containsKey("until") ? instant(q.get("until"), "until") : now;
    String since = blankToNull(q.get("since"));
    Instant from = since == null ? until.minus(dflt)
        : Durations.parse(since).map(now::minus).orElseGet(() -> instant(since, "since"));
    if (!from.isBefore(until) || Duration.between(from, until).compareTo(DiscoverProcessor.MAX_RETENTION) > 0) {
      throw new Answers.BadRequest("since must be before until, and at most 8 days before it (what discovery keeps)");
    }
    return new Instant[] {from, until};
  }

  private static Instant instant(String v, String name) {
    try {
      return Instant.parse(v);
    } catch (RuntimeException e) {
      throw new Answers.BadRequest(name + " is an ISO-8601 instant (e.g. 2026-11-30T01:00:00Z) or a duration (7d, 24h)");
    }
  }

  private static String blankToNull(String v) {
    return v == null || v.isBlank() ? null : v;
  }
}
