package dev.knockwatch.notify.console;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.Alert;
import dev.knockwatch.notify.spi.Notification;
import dev.knockwatch.notify.spi.Notifier;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class ConsoleNotifierTest {

  static final Instant T0 = Instant.parse("2026-11-29T18:45:00Z");

  static Alert alert(String agentId, String summary) {
    return Alert.firing("persistent-retry", "xhfHytmXL-L6RsYw2CrSjA").fingerprint("85765b1535365552")
        .agentId(agentId).count(5).windowStart(T0).windowEnd(T0.plusSeconds(300)).firstSeen(T0.plusSeconds(32))
        .lastSeen(T0.plusSeconds(112)).summary(summary).sampleEventIds(List.of("e1")).build();
  }

  @Test
  void anAlertIsOneReadableLine() {
    assertThat(ConsoleNotifier.format(alert("ci-runner-1", "command refused 5 times within 5m (threshold 5); last: example.com:80")))
        .isEqualTo("ALERT [WARNING] persistent-retry firing command=xhfHytmXL-L6RsYw2CrSjA agent=ci-runner-1 count=5 "
            + "window=18:45:00-18:50:00Z fingerprint=85765b1535365552 — command refused 5 times within 5m "
            + "(threshold 5); last: example.com:80");
  }

  @Test
  void hostAndRoleAppearWhenTheAlertHasThem() {
    Alert a = Alert.firing("off-role-host", "xhfHytmXL-L6RsYw2CrSjA").fingerprint("f").severity(Alert.Severity.PAGE)
        .status(Alert.Status.RESOLVED).agentId("ci-1").role("ci").host("evil.test").port(443)
        .sampleEventIds(List.of()).build();
    assertThat(ConsoleNotifier.format(a)).isEqualTo(
        "ALERT [PAGE] off-role-host resolved command=xhfHytmXL-L6RsYw2CrSjA agent=ci-1 role=ci host=evil.test:443 "
            + "count=1 fingerprint=f");
  }

  @Test
  void agentChosenTextCannotForgeASecondLineOrDriveTheTerminal() {
    String line = ConsoleNotifier.format(alert("ci\nALERT [CRITICAL] forged", "last: evil.test\u001b[2J\r\u202Eexe.txt"));
    assertThat(line).doesNotContain("\n", "\r", "\u001b", "\u202E")
        .contains("agent=ci ALERT [CRITICAL] forged");
  }

  @Test
  void notifyPrintsTheLineAndReportsDelivery() {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    ConsoleNotifier n = new ConsoleNotifier(new PrintStream(buf, true, StandardCharsets.UTF_8));
    assertThat(n.notify(Notification.of("console", Notification.Event.FIRING, alert("a", "s"), null)))
        .isEqualTo(Notifier.Result.ok());
    assertThat(buf.toString(StandardCharsets.UTF_8)).startsWith("ALERT [WARNING] persistent-retry").endsWith("— s\n");
  }

  @Test
  void aDigestIsOneLineToo() {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    ConsoleNotifier n = new ConsoleNotifier(new PrintStream(buf, true, StandardCharsets.UTF_8));
    n.notify(new Notification("console", Notification.Event.FIRING, "g", List.of(alert("a", "s"), alert("b", "s")), null));
    assertThat(buf.toString(StandardCharsets.UTF_8)).isEqualTo("ALERTS [WARNING] persistent-retry: 2 firing, "
        + "commands=xhfHytmXL-L6RsYw2CrSjA,xhfHytmXL-L6RsYw2CrSjA (grouped)\n");
  }
}
