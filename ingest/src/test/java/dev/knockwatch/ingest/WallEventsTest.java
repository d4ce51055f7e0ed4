package dev.knockwatch.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.Kind;
import dev.knockwatch.events.RejectedLine;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.events.config.KeyValues;
import dev.knockwatch.events.config.YamlFile;
import dev.knockwatch.ingest.spi.Attribution;
import dev.knockwatch.ingest.spi.FileOptions;
import dev.knockwatch.ingest.spi.Identities;
import dev.knockwatch.ingest.spi.LineParser;
import dev.knockwatch.ingest.spi.Parsed;
import dev.knockwatch.ingest.spi.SourceFormat;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A wall that names no command (a firewall): its refusals are published with the agent its
 * source maps the wall's identity to, no command id and {@code commandUnknown}; an identity no
 * entry maps is a rejected line whose notice is keyed by the wall and that identity, the same for
 * every refusal of it, so ingest-rejects pages once per identity and nothing is lost.
 */
class WallEventsTest {

  /** A wall whose lines are {@code uid=N HOST:PORT}. */
  static final class Wall implements SourceFormat {
    static final dev.knockwatch.events.config.Key<Identities> AGENTS = Identities.key(List.of("uid"), Set.of());

    @Override public String wireName() { return "test-wall"; }
    @Override public String summary() { return "a wall of the test"; }
    @Override public Choice choice() { return Choice.byTypeOnly(); }
    @Override public boolean perCommand() { return false; }
    @Override public List<dev.knockwatch.events.config.Key<?>> keys() { return List.of(AGENTS); }
    @Override public List<Skip> skips() { return List.of(); }
    @Override public String yields() { return "each line"; }
    @Override public Trust trust() { return new Trust("the test", "the uid", "nothing"); }

    @Override
    public LineParser parser(FileOptions options) {
      Identities agents = options.get(AGENTS);
      return src -> {
        String[] parts = src.text().split(" ");
        String uid = parts[0].substring("uid=".length());
        Attribution.Result who = Attribution.ofWall("test-wall", "uid=" + uid, Map.of("uid", uid), agents);
        if (who instanceof Attribution.Refused r) {
          return r.parsed();
        }
        String agent = ((Attribution.Attributed) who).agentId();
        return Parsed.of(src.newEvent().agentId(agent).commandUnknown(true).source("test-wall").kind(Kind.NETWORK)
            .action("connect").host(parts[1].split(":")[0]).port(Integer.parseInt(parts[1].split(":")[1]))
            .subject(new ViolationEvent.Subject("test-wall", "uid=" + uid)).build());
      };
    }
  }

  @Test
  void aMappedIdentityIsItsAgentsRefusalAndAnUnmappedOnePagesOnceByItsIdentity(@TempDir Path logs) throws Exception {
    Files.createDirectories(logs.resolve("kernel"));
    Files.writeString(logs.resolve("kernel/kern.log"), """
        uid=65534 evil.example:443
        uid=0 evil.example:443
        uid=0 other.example:80
        uid=1000 evil.example:443
        """);
    List<String> problems = new ArrayList<>();
    Wall wall = new Wall();
    KeyValues with = KeyValues.of(new YamlFile("sources.yaml", problems)
        .parse("agents:\n  - {uid: \"65534\", agent: ci-runner-1}\n").orElseThrow(), "source 1", wall.keys()).orElseThrow();
    FileOptions options = new FileOptions(with, "kernel/kern.log", "kern", other -> false);
    ListSink sink = new ListSink();
    try (IngestAgent agent = LogLayout.forFormat(logs, p -> true, wall, () -> wall.parser(options), sink, "host-a")
        .wholeFiles()) {
      while (agent.pollOnce() > 0) {
        // to the end
      }
    }
    List<ViolationEvent> refusals = sink.events.stream().filter(e -> e.unattributed() == null).toList();
    assertThat(refusals).singleElement().satisfies(e -> {
      assertThat(e.agentId()).isEqualTo("ci-runner-1");
      assertThat(e.commandId()).isNull();
      assertThat(e.commandUnknown()).isTrue();
      assertThat(e.key()).isEqualTo("agent:ci-runner-1");
      assertThat(e.subject()).isEqualTo(new ViolationEvent.Subject("test-wall", "uid=65534"));
    });
    assertThat(sink.rejected).extracting(RejectedLine::code).containsExactly("unmapped-identity", "unmapped-identity",
        "unmapped-identity");
    List<ViolationEvent> notices = sink.events.stream().filter(e -> e.unattributed() != null).toList();
    assertThat(notices).extracting(ViolationEvent::commandId).containsExactly(
        ViolationEvent.unattributedCommandId("test-wall uid=0"), ViolationEvent.unattributedCommandId("test-wall uid=0"),
        ViolationEvent.unattributedCommandId("test-wall uid=1000"));
    assertThat(notices).allSatisfy(n -> {
      assertThat(n.unattributed().code()).isEqualTo("unmapped-identity");
      assertThat(n.unattributed().directory()).isNull();
      assertThat(n.agentId()).isNull();
    });
    assertThat(notices).extracting(n -> n.unattributed().identity())
        .containsExactly("test-wall uid=0", "test-wall uid=0", "test-wall uid=1000");
  }
}
