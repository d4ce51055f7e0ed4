package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.broker.EmbeddedKafkaBroker;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Silence;
import dev.knockwatch.testkit.EmbeddedKafkaExtension;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

@Tag("integration")
@ExtendWith(EmbeddedKafkaExtension.class)
class SilenceCommandTest {

  @Test
  void addListAndExpire(EmbeddedKafkaBroker broker) {
    String kafka = broker.bootstrapServers();
    KnockwatchTest.Run add = KnockwatchTest.run("silence", "add", "--bootstrap-servers", kafka, "--rule", "off-role-*",
        "--agent", "ci-runner-7", "--for", "30m", "--comment", "rolling out the new allowlist", "--by", "ana");
    assertThat(add.code()).as(add.err()).isZero();
    String id = add.out().strip();

    KnockwatchTest.Run list = KnockwatchTest.run("silence", "list", "--bootstrap-servers", kafka, "--json");
    Silence s = list.out().lines().map(l -> Json.read(l, Silence.class)).filter(x -> x.id().equals(id)).findFirst()
        .orElseThrow();
    assertThat(s.matchers()).isEqualTo(Map.of("rule", "off-role-*", "agentId", "ci-runner-7"));
    assertThat(Duration.between(s.startsAt(), s.endsAt())).isEqualTo(Duration.ofMinutes(30));
    assertThat(s.createdBy()).isEqualTo("ana");
    assertThat(KnockwatchTest.run("silence", "list", "--bootstrap-servers", kafka).out())
        .contains(id + "  active  until", "rule=off-role-* agentId=ci-runner-7", "by ana: rolling out the new allowlist");

    KnockwatchTest.Run expire = KnockwatchTest.run("silence", "expire", "--bootstrap-servers", kafka, id);
    assertThat(expire.code()).as(expire.err()).isZero();
    assertThat(KnockwatchTest.run("silence", "list", "--bootstrap-servers", kafka).out()).contains(id + "  expired  until");
  }

  @Test
  void aSilenceNeedsAMatcherAndADurationAndExpireNeedsAKnownId(EmbeddedKafkaBroker broker) {
    String kafka = broker.bootstrapServers();
    KnockwatchTest.Run none = KnockwatchTest.run("silence", "add", "--bootstrap-servers", kafka, "--comment", "x");
    assertThat(none.code()).isEqualTo(Knockwatch.USAGE);
    assertThat(none.err()).contains("give at least one of --rule, --command, --agent, --role, --host");
    KnockwatchTest.Run bad = KnockwatchTest.run("silence", "add", "--bootstrap-servers", kafka, "--rule", "r",
        "--for", "soon", "--comment", "x");
    assertThat(bad.code()).isEqualTo(Knockwatch.USAGE);
    assertThat(bad.err()).contains("--for soon is not a duration");
    KnockwatchTest.Run unknown = KnockwatchTest.run("silence", "expire", "--bootstrap-servers", kafka, "nope");
    assertThat(unknown.code()).isEqualTo(Knockwatch.USAGE);
    assertThat(unknown.err()).contains("no silence nope");
  }
}
