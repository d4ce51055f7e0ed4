package dev.knockwatch.notify;

import dev.knockwatch.events.Alert;
import java.time.Instant;
import java.util.List;

/** The alerts the payload golden tests and the contract test send. */
public final class Fixtures {

  public static final Instant T0 = Instant.parse("2026-11-29T18:45:00Z");
  public static final String PUBLIC_URL = "https://knockwatch.soc.test";

  private Fixtures() {}

  /** An off-role page, as detection writes it. */
  public static Alert offRole() {
    return Alert.firing("off-role-host", "DoorsDoorsDoorsDoors01").fingerprint("032fd9e08f8acfe5")
        .severity(Alert.Severity.PAGE).agentId("ci-runner-2").role("ci").host("evil.example").port(443)
        .firstSeen(T0).lastSeen(T0)
        .summary("agent ci-runner-2 (role ci) tried evil.example:443, which its role does not allow")
        .sampleEventIds(List.of("22ad24c3916641e5")).sources(List.of("srt-violation"))
        .policyVersion("bfc0f5922941").build();
  }

  /** A count alert whose agent-chosen fields try to ping the channel, hide a link and reorder text. */
  public static Alert hostile() {
    return Alert.firing("persistent-retry", "xhfHytmXL-L6RsYw2CrSjA").fingerprint("85765b1535365552")
        .agentId("<!channel> `agent`").role("ci").host("<http://evil.test|click>").port(80).count(7).windowStart(T0)
        .windowEnd(T0.plusSeconds(300)).firstSeen(T0.plusSeconds(32)).lastSeen(T0.plusSeconds(112))
        .summary("command refused 7 times; last: <http://evil.test|click here> <!here> <@U123> & \u202Eexe.txt\u0007")
        .sampleEventIds(List.of("e1")).sources(List.of("srt-violation", "squid"))
        .policyVersion("bfc0f5922941")
        .targets(List.of(new Alert.Target("<http://evil.test|click>:80", 5),
            new Alert.Target("registry.npmjs.org:443", 2)))
        .build();
  }
}
