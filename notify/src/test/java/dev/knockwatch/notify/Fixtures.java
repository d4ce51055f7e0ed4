package dev.knockwatch.notify;

import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Source;
import java.time.Instant;
import java.util.List;

/** The alerts the payload golden tests and the contract test send. */
public final class Fixtures {

  public static final Instant T0 = Instant.parse("2026-11-29T18:45:00Z");
  public static final String PUBLIC_URL = "https://knockwatch.soc.test";

  private Fixtures() {}

  /** An off-role page, as detection writes it. */
  public static Alert offRole() {
    return new Alert("032fd9e08f8acfe5", "off-role-host", Alert.Severity.PAGE, Alert.Status.FIRING,
        "DoorsDoorsDoorsDoors01", "ci-runner-2", "ci", "evil.example", 443, 1, null, null, T0, T0,
        "agent ci-runner-2 (role ci) tried evil.example:443, which its role does not allow",
        List.of("22ad24c3916641e5"), List.of(Source.SRT_VIOLATION), "bfc0f5922941", null, null, null, null);
  }

  /** A count alert whose agent-chosen fields try to ping the channel, hide a link and reorder text. */
  public static Alert hostile() {
    return new Alert("85765b1535365552", "persistent-retry", Alert.Severity.WARNING, Alert.Status.FIRING,
        "xhfHytmXL-L6RsYw2CrSjA", "<!channel> `agent`", "ci", "<http://evil.test|click>", 80, 7, T0, T0.plusSeconds(300),
        T0.plusSeconds(32), T0.plusSeconds(112),
        "command refused 7 times; last: <http://evil.test|click here> <!here> <@U123> & \u202Eexe.txt\u0007",
        List.of("e1"), List.of(Source.SRT_VIOLATION, Source.SQUID), "bfc0f5922941", null,
        List.of(new Alert.Target("<http://evil.test|click>:80", 5), new Alert.Target("registry.npmjs.org:443", 2)), null, null);
  }
}
