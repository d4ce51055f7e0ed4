package dev.knockwatch.ingest.formats.tinyproxy;

import dev.knockwatch.events.config.Key;
import dev.knockwatch.ingest.spi.FileOptions;
import dev.knockwatch.ingest.spi.Identities;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.WallFormat;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Set;

/**
 * tinyproxy's refusals (1.11, Debian's {@code tinyproxy} package), from its {@code LogFile}: the
 * filter's ({@code Filter}, {@code FilterDefaultDeny Yes}: 403 Filtered), {@code ConnectPort}'s (403
 * Access violation) and the {@code Allow} list's (403 Access denied). A proxy of many clients names
 * no command: the source's {@code agents} map the client's address to an agent.
 */
public final class TinyproxyFormat implements WallFormat {

  public static final String NAME = "tinyproxy";

  static final Key<Identities> AGENTS = Identities.key(List.of("source"), Set.of("source"));
  static final Key<ZoneId> TIME_ZONE = Key.zone("timeZone",
      "the zone of tinyproxy's clock: it writes its host's local time, with no zone and no year");

  @Override
  public String wireName() {
    return NAME;
  }

  @Override
  public String summary() {
    return "tinyproxy's `LogFile` (1.11, at `LogLevel Info`; `Connect` loses the refused CONNECT ports): `Proxying refused"
        + " on filtered domain \"HOST\"` (or `url`, with `FilterURLs`), `Refused CONNECT method on port N` and"
        + " `Unauthorized connection from \"ADDRESS\"`. A refusal names no connection: it is tied to the open request"
        + " it fits, which the connection's `Connect (file descriptor N): ADDRESS` and `Request (file descriptor N): …`"
        + " lines name; the source's `agents` map the client's address to an agent. Not its `Syslog On` lines: those"
        + " are syslog's, and rejected (`unparseable`)";
  }

  @Override
  public List<Key<?>> keys() {
    return List.of(AGENTS, TIME_ZONE);
  }

  @Override
  public LineParser parser(FileOptions options) {
    ZoneId zone = options.get(TIME_ZONE);
    return new TinyproxyParser(WallFormat.agents(options, AGENTS), zone == null ? ZoneOffset.UTC : zone);
  }

  @Override
  public List<Skip> skips() {
    return List.of(
        new Skip("context", "a connection's `Connect` and `Request` lines (and the transparent mode's `trans Host`):"
            + " who asked for what, read for the refusal that may follow"),
        new Skip("allowed", "`Established connection to host`: the proxy let a request through"),
        new Skip("other-message", "tinyproxy's other messages: start, configuration, `opensock`, `Closed connection`,"
            + " signals, shutdown"));
  }

  @Override
  public String yields() {
    return "each refusal: `commandUnknown`, the agent the source maps the client's address to, the client as"
        + " `sourceAddress` and `subject` (`src=ADDRESS`), the request's `method`, `host`, `port` and `url` (action"
        + " `http-connect` for a CONNECT, else `http-request`), tinyproxy's reason; the Allow list's refusal is a"
        + " `connect` with `targetUnknown`. A client no entry maps is rejected (`unmapped-identity`), and so is a"
        + " refusal whose open requests are of clients of different agents, or that follows no request (`LogLevel"
        + " Notice`): the log cannot say whose it is";
  }

  @Override
  public Trust trust() {
    return new Trust("tinyproxy, the egress proxy, outside the sandbox: each line's level, time, PID, its own"
        + " words, the client's address and the file descriptor",
        "who: the agent the source's `agents` map the client's address (tinyproxy's peer) to; the command is"
        + " unknown. A refusal line names no connection: it is the one open request it fits, or no one's (rejected)"
        + " when the requests it fits are different agents'",
        "the request line (method, URL, protocol: any byte but a newline; tinyproxy cuts the line at 798 bytes) and so"
        + " the host a refusal quotes. A client that holds a request open for the host another agent's client is"
        + " refused makes that refusal ambiguous: rejected, never given to the wrong agent. A request cut inside its"
        + " host (or a transparent one read at `LogLevel Connect`) is taken for a refusal only when no open request"
        + " names the refused host. It never writes a line of its own");
  }
}
