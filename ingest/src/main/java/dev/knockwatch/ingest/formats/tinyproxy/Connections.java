package dev.knockwatch.ingest.formats.tinyproxy;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * The connections tinyproxy has open, as its log tells: each opened by {@code Connect (file
 * descriptor N): ADDRESS} and ended by the next connection on the same descriptor, by its refusal,
 * by the proxy's {@code Established connection} to its host or by {@code Closed connection}. A
 * refusal line names no descriptor: it can only be one of the open requests its host, URL or port
 * fits. Bounded: past {@link #MAX_OPEN} the oldest is forgotten (a client that never finishes its
 * request keeps its descriptor, and only the descriptor's next connection ends it in the log).
 */
final class Connections {

  static final int MAX_OPEN = 4096;

  /** One connection: the process and descriptor it is known by, its client, and its request once logged. */
  static final class Open {
    final long pid;
    final long fd;
    final String client;
    Request request;

    Open(long pid, long fd, String client) {
      this.pid = pid;
      this.fd = fd;
      this.client = client;
    }
  }

  private record Id(long pid, long fd) {}

  private final LinkedHashMap<Id, Open> open = new LinkedHashMap<>(16, 0.75f, false) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<Id, Open> eldest) {
      return size() > MAX_OPEN;
    }
  };

  /** A new connection on {@code fd}: whatever the descriptor carried before has ended. */
  void connect(long pid, long fd, String client) {
    open.remove(new Id(pid, fd));
    open.put(new Id(pid, fd), new Open(pid, fd, client));
  }

  /** The request of the connection on {@code fd}; of a connection whose start the log does not hold, its client unknown. */
  void request(long pid, long fd, Request request) {
    open.computeIfAbsent(new Id(pid, fd), id -> new Open(pid, fd, null)).request = request;
  }

  /** The transparent mode's reading of the request on {@code fd}: its host from the {@code Host} header. */
  void rewrite(long pid, long fd, Request request) {
    Open o = open.get(new Id(pid, fd));
    if (o != null) {
      o.request = request;
    }
  }

  void closed(long pid, long fd) {
    open.remove(new Id(pid, fd));
  }

  /** The proxy dialled {@code host} for one of its open requests: the oldest of them is no refusal. */
  void established(long pid, String host) {
    candidates(pid, r -> host.equals(r.host())).stream().findFirst().ifPresent(this::end);
  }

  /** The newest connection of {@code client} that logged no request (the Allow list refused it first). */
  void refusedBeforeRequest(long pid, String client) {
    Open newest = null;
    for (Open o : open.values()) {
      if (o.pid == pid && o.request == null && client.equals(o.client)) {
        newest = o;
      }
    }
    if (newest != null) {
      end(newest);
    }
  }

  /** The open requests of process {@code pid} that {@code fits}, oldest first. */
  List<Open> candidates(long pid, Predicate<Request> fits) {
    List<Open> out = new ArrayList<>();
    for (Open o : open.values()) {
      if (o.pid == pid && o.request != null && fits.test(o.request)) {
        out.add(o);
      }
    }
    return out;
  }

  void end(Open o) {
    open.remove(new Id(o.pid, o.fd), o);
  }

  /** tinyproxy started again: no connection of before is open. */
  void clear() {
    open.clear();
  }
}
