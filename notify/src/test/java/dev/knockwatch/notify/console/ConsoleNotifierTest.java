package dev.knockwatch.notify.console;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.events.Alert;
import dev.knockwatch.notify.Notification;
import dev.knockwatch.notify.Notifier;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class ConsoleNotifierTest {

  static final Instant T0 = Instant.parse("2026-11-29T18:45:00Z");

  static Alert alert(String agentId, String summary) {
    return new Alert("85765b1535365552", "persistent-retry", Alert.Severity.WARNING, Alert.Status.FIRING,
        "xhfHytmXL-L6RsYw2CrSjA", agentId, null, null, null, 5, T0, T0.plusSeconds(300),
        T0.plusSeconds(32), T0.plusSeconds(112), summary, List.of("e1"), null, null, null, null, null, null);
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
    Alert a = new Alert("f", "off-role-host", Alert.Severity.PAGE, Alert.Status.RESOLVED, "xhfHytmXL-L6RsYw2CrSjA",
        "ci-1", "ci", "evil.test", 443, 1, null, null, null, null, null, List.of(), null, null, null, null, null, null);
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
