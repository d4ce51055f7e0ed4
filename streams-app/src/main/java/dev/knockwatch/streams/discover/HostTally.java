package dev.knockwatch.streams.discover;

import dev.knockwatch.events.AddressClass;
import dev.knockwatch.streams.state.StateStrings;
import dev.knockwatch.streams.state.Varints;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * One refused destination ({@code host:port}, exactly as refused: never widened to its parent
 * domain) of one role in one hour: how often, for how many distinct commands, tasks and agents
 * ({@link Kmv}), the first few agents' names, when, what class of address, and which rules'
 * alerts named it. Every part is bounded: names at {@value #MAX_NAMES}, rules at {@value #MAX_NAMES}.
 */
final class HostTally {

  static final int MAX_NAMES = 4;

  final String host;
  /** -1: the refusal named no port. */
  final int port;
  private final String target;
  AddressClass addressClass;
  long refusals;
  long firstSeen;
  long lastSeen;
  final Kmv commands;
  final Kmv tasks;
  final Kmv agents;
  final List<String> agentNames;
  final List<String> alertRules;

  HostTally(String host, int port) {
    this(host, port, null, 0, Long.MAX_VALUE, Long.MIN_VALUE, new Kmv(), new Kmv(), new Kmv(), new ArrayList<>(2),
        new ArrayList<>(1));
  }

  private HostTally(String host, int port, AddressClass addressClass, long refusals, long firstSeen, long lastSeen,
      Kmv commands, Kmv tasks, Kmv agents, List<String> agentNames, List<String> alertRules) {
    this.host = host;
    this.port = port;
    this.target = target(host, port);
    this.addressClass = addressClass;
    this.refusals = refusals;
    this.firstSeen = firstSeen;
    this.lastSeen = lastSeen;
    this.commands = commands;
    this.tasks = tasks;
    this.agents = agents;
    this.agentNames = agentNames;
    this.alertRules = alertRules;
  }

  /** {@code host:port} ({@code [v6]:port}), or the host alone when no port was named. */
  static String target(String host, int port) {
    if (port < 0) {
      return host;
    }
    return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
  }

  String target() {
    return target;
  }

  void refused(long at, String commandId, String task, String agent, AddressClass cls) {
    refusals++;
    firstSeen = Math.min(firstSeen, at);
    lastSeen = Math.max(lastSeen, at);
    commands.add(commandId);
    tasks.add(task);
    if (agent != null) {
      agents.add(agent);
      addName(agentNames, agent);
    }
    if (cls != null && addressClass == null) {
      addressClass = cls;
    }
  }

  void alerted(long at, String rule) {
    firstSeen = Math.min(firstSeen, at);
    lastSeen = Math.max(lastSeen, at);
    addName(alertRules, rule);
  }

  private static void addName(List<String> names, String name) {
    if (names.size() < MAX_NAMES && !names.contains(name)) {
      names.add(name);
    }
  }

  /** Adds {@code other}'s counts (the same target, another hour or partition). */
  void merge(HostTally other) {
    refusals += other.refusals;
    firstSeen = Math.min(firstSeen, other.firstSeen);
    lastSeen = Math.max(lastSeen, other.lastSeen);
    commands.merge(other.commands);
    tasks.merge(other.tasks);
    agents.merge(other.agents);
    other.agentNames.forEach(a -> addName(agentNames, a));
    other.alertRules.forEach(r -> addName(alertRules, r));
    if (addressClass == null) {
      addressClass = other.addressClass;
    }
  }

  HostTally copy() {
    return new HostTally(host, port, addressClass, refusals, firstSeen, lastSeen, commands.copy(), tasks.copy(),
        agents.copy(), new ArrayList<>(agentNames), new ArrayList<>(alertRules));
  }

  /** Which of two to keep when a bucket is full: more distinct commands, then more refusals, then the later. */
  static int rank(HostTally a, HostTally b) {
    int c = Long.compare(a.commands.estimate(), b.commands.estimate());
    if (c == 0) {
      c = Long.compare(a.refusals, b.refusals);
    }
    return c != 0 ? c : Long.compare(a.lastSeen, b.lastSeen);
  }

  void write(DataOutputStream out, StateStrings strings) throws IOException {
    strings.write(out, host);
    Varints.write(out, port);
    out.writeByte(addressClass == null ? -1 : addressClass.ordinal());
    Varints.write(out, refusals);
    Varints.write(out, firstSeen);
    Varints.write(out, lastSeen);
    commands.write(out);
    // a refusal with no task is its command's task: then the sketches are the same, written once
    boolean sameTasks = tasks.sameAs(commands);
    out.writeBoolean(sameTasks);
    if (!sameTasks) {
      tasks.write(out);
    }
    agents.write(out);
    strings.writeList(out, agentNames);
    strings.writeList(out, alertRules);
  }

  static HostTally read(DataInputStream in, StateStrings strings) throws IOException {
    String host = strings.read(in);
    int port = (int) Varints.read(in);
    int cls = in.readByte();
    if (host == null || cls >= AddressClass.values().length) {
      throw new IOException("not a host tally");
    }
    long refusals = Varints.read(in);
    long first = Varints.read(in);
    long last = Varints.read(in);
    Kmv commands = Kmv.read(in);
    Kmv tasks = in.readBoolean() ? commands.copy() : Kmv.read(in);
    Kmv agents = Kmv.read(in);
    List<String> names = strings.readList(in);
    List<String> rules = strings.readList(in);
    return new HostTally(host, port, cls < 0 ? null : AddressClass.values()[cls], refusals, first, last, commands,
        tasks, agents, new ArrayList<>(names == null ? List.of() : names), new ArrayList<>(rules == null ? List.of() : rules));
  }
}
