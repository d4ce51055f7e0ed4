package dev.knockwatch.streams.discover;

import dev.knockwatch.events.AddressClass;
import dev.knockwatch.streams.state.StateStrings;
import dev.knockwatch.streams.state.Varints;
import dev.knockwatch.streams.state.VersionedBinarySerde;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The refused destinations of one role in one hour (of one partition), at most {@value #MAX_HOSTS}.
 * When full, a new destination takes the place of the least needed one only when that one is no
 * more needed than a newcomer (one command, one refusal; the oldest such goes): else the
 * refusal is counted in {@link #dropped}. So a flood of distinct hosts from one command churns
 * only the hosts asked for once, and a host many commands needed keeps its place. An alert naming
 * a destination always gets it a place (alerts are the streams app's own, bounded by their lifecycle).
 */
public final class RoleHour {

  static final int MAX_HOSTS = 48;

  final String role;
  final long hour;
  final List<HostTally> hosts;
  private final Map<String, HostTally> byTarget;
  /** Refusals of destinations that found no place, and those of destinations that lost theirs. */
  long dropped;

  RoleHour(String role, long hour) {
    this(role, hour, new ArrayList<>(), 0);
  }

  private RoleHour(String role, long hour, List<HostTally> hosts, long dropped) {
    this.role = role;
    this.hour = hour;
    this.hosts = hosts;
    this.dropped = dropped;
    this.byTarget = new HashMap<>();
    hosts.forEach(t -> byTarget.put(t.target(), t));
  }

  /** Counts a refusal; false when its destination found no place (counted in {@link #dropped}). */
  boolean refused(String host, int port, long at, String commandId, String task, String agent, AddressClass cls) {
    HostTally t = place(host, port, false);
    if (t == null) {
      dropped++;
      return false;
    }
    t.refused(at, commandId, task, agent, cls);
    return true;
  }

  void alerted(String host, int port, long at, String rule) {
    place(host, port, true).alerted(at, rule);
  }

  int size() {
    return hosts.size();
  }

  private HostTally place(String host, int port, boolean always) {
    String target = HostTally.target(host, port);
    HostTally t = byTarget.get(target);
    if (t != null) {
      return t;
    }
    if (hosts.size() >= MAX_HOSTS) {
      int least = 0;
      for (int i = 1; i < hosts.size(); i++) {
        if (HostTally.rank(hosts.get(i), hosts.get(least)) < 0) {
          least = i;
        }
      }
      HostTally gone = hosts.get(least);
      if (!always && (gone.commands.estimate() > 1 || gone.refusals > 1)) {
        return null;
      }
      dropped += gone.refusals;
      byTarget.remove(gone.target());
      hosts.remove(least);
    }
    t = new HostTally(host, port);
    hosts.add(t);
    byTarget.put(target, t);
    return t;
  }

  static final Serde SERDE = new Serde();

  /** Version 1: role, hour, dropped, then each destination ({@link HostTally#write}). */
  static final class Serde extends VersionedBinarySerde<RoleHour> {
    private static final byte V1 = 1;

    Serde() {
      super(RoleHour.class, "role-hour");
    }

    @Override
    protected byte[] encode(RoleHour v) {
      return StateStrings.writeValue(V1, 64 + v.hosts.size() * 200, (out, strings) -> {
        strings.write(out, v.role);
        Varints.write(out, v.hour);
        Varints.write(out, v.dropped);
        Varints.write(out, v.hosts.size());
        for (HostTally t : v.hosts) {
          t.write(out, strings);
        }
      });
    }

    @Override
    protected RoleHour decode(byte[] bytes) throws IOException {
      return StateStrings.readValue(bytes, (in, strings, version) -> {
        String role = strings.read(in);
        long hour = Varints.read(in);
        long dropped = Varints.read(in);
        int n = Varints.readInt(in, 0);
        if (role == null || n > MAX_HOSTS) {
          throw new IOException("not a role-hour");
        }
        List<HostTally> hosts = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          hosts.add(HostTally.read(in, strings));
        }
        return new RoleHour(role, hour, hosts, dropped);
      }, V1);
    }
  }
}
