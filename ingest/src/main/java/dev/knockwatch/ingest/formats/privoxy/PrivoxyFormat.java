package dev.knockwatch.ingest.formats.privoxy;

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
 * Privoxy's log file (3.0.34): the requests its block action refused, {@code Crunch: Blocked: …}
 * ({@code debug 1024}), each tied by its thread id to the client address of its connection,
 * {@code Connect: Accepted connection from …} ({@code debug 2}). A request names no command: the
 * source's {@code agents} map the client address to an agent.
 */
public final class PrivoxyFormat implements WallFormat {

  public static final String NAME = "privoxy";

  static final Key<Identities> AGENTS = Identities.key(List.of("source"), Set.of("source"));
  static final Key<ZoneId> TIME_ZONE = Key.zone("timeZone",
      "the zone of privoxy's clock: it writes its local time with no offset");

  @Override
  public String wireName() {
    return NAME;
  }

  @Override
  public String summary() {
    return "Privoxy's log file (`logfile`, 3.0.34): the requests its `block` action refused, `Crunch: Blocked: URL`"
        + " (`debug 1024`), each tied by the thread id of its line to its connection's client address, `Connect:"
        + " Accepted connection from ADDRESS` (`debug 2`); Debian's stock configuration logs neither. A request names"
        + " no command, so the source's `agents` map the client address to an agent";
  }

  @Override
  public List<Key<?>> keys() {
    return List.of(AGENTS, TIME_ZONE);
  }

  @Override
  public LineParser parser(FileOptions options) {
    ZoneId zone = options.get(TIME_ZONE);
    return new PrivoxyParser(WallFormat.agents(options, AGENTS), zone == null ? ZoneOffset.UTC : zone);
  }

  @Override
  public List<Skip> skips() {
    return List.of(
        new Skip("connection", "a connection's line (`debug 2`, `Connect: …`): its `Accepted connection from ADDRESS`"
            + " names the client of the thread's later requests, `Initialized N socket slots.` a privoxy started, whose"
            + " threads name none of the last one's clients"),
        new Skip("dns-failure", "`Crunch: DNS failure: URL`: privoxy could not resolve an allowed host; no refusal"),
        new Skip("upstream-failure", "`Crunch: Connection failure`, `Connection timeout`, `Forwarding failed`, `No server"
            + " data received`: an allowed request the upstream did not answer; no refusal"),
        new Skip("not-a-refusal", "another crunch (`Redirected`, `CGI Call`, `Unsupported HTTP feature`, `Out of memory`):"
            + " privoxy answered for itself, no refusal"),
        new Skip("access-log", "a Common Log Format line (`debug 512`): it says the status, not whether privoxy or the"
            + " upstream refused, and no thread; never counted"),
        new Skip("other-message", "a line of another level (`Request`, `Info`, `Error`, `Header`, …): context, or"
            + " privoxy's own"));
  }

  @Override
  public String yields() {
    return "each `Crunch: Blocked` (and `Untrusted`) line: `commandUnknown`, the agent the source maps the client"
        + " address to, the target as `host`/`port` (a CONNECT's `host:port`, action `http-connect`; else the `url`,"
        + " redacted, action `http-request`), the client as `sourceAddress` and `subject` `src=ADDRESS`, and as"
        + " `reason` the block (privoxy never logs the block's own text; a `limit-connect{…}` that made it, `debug"
        + " 4096`, is named); an address no entry maps is rejected (`unmapped-identity`), and a crunch whose"
        + " connection line was not read too (`privoxy client-unknown`: set `debug 2`)";
  }

  @Override
  public Trust trust() {
    return new Trust("privoxy, outside the sandbox, into its own `logfile`; the line's time, thread id and level are"
        + " privoxy's",
        "who: the agent the source's `agents` map the client address privoxy accepted the connection from (`debug 2`,"
            + " tied to the crunch by the thread id); the command is unknown. Only `Crunch: Blocked` and `Untrusted`"
            + " are refusals: privoxy writes them only when its action refused the request",
        "the request's URL or CONNECT target (host, port, path, query): after privoxy's own prefix, never at a line's"
            + " start; a URL that holds `Accepted connection from` or `Crunch: Blocked:` is only a URL");
  }
}
