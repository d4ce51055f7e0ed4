package dev.knockwatch.events;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** A wall that names no command is keyed by its agent or session, never by an invented command. */
class EventKeyTest {

  static final ViolationEvent WALL = ViolationEvent.builder().agentId("ci-runner-1").commandUnknown(true).build();

  @Test
  void anEventIsKeyedByItsCommandElseByTheFinestGrainItsWallNames() {
    assertThat(WALL.toBuilder().commandId("xhfHytmXL-L6RsYw2CrSjA").build().key()).isEqualTo("xhfHytmXL-L6RsYw2CrSjA");
    assertThat(WALL.key()).isEqualTo("agent:ci-runner-1");
    assertThat(WALL.toBuilder().sessionId("sandbox-7").build().key()).isEqualTo("session:ci-runner-1/sandbox-7");
    // an event that does not say its command is unknown keeps its (missing) command id: ingest rejects it
    assertThat(WALL.toBuilder().commandUnknown(null).build().key()).isNull();
  }

  @Test
  void aKeyToLookUpIsACommandIdOrAWallsKeyAndNothingElse() {
    assertThat(EventKey.problem("xhfHytmXL-L6RsYw2CrSjA")).isEmpty();
    assertThat(EventKey.problem("agent:ci-runner-1")).isEmpty();
    assertThat(EventKey.problem("session:ci-runner-1/sandbox-7")).isEmpty();
    assertThat(EventKey.problem("agent:../x")).isPresent();
    assertThat(EventKey.problem("session:ci-runner-1")).contains("a session's key is session:AGENT/SESSION");
    assertThat(EventKey.problem("session:ci-runner-1/a/b")).isPresent();
    assertThat(EventKey.problem("short")).isPresent();
    assertThat(EventKey.namesNoCommand("agent:x")).isTrue();
    assertThat(EventKey.namesNoCommand("xhfHytmXL-L6RsYw2CrSjA")).isFalse();
  }
}
