package dev.knockwatch.cli.rulestest;

import dev.knockwatch.cli.rulestest.RuleTestRunner.Outcome;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Sanitize;
import java.util.Locale;

/** What a failed test prints: what was expected and not raised, what was raised and must not be, and every alert. */
public final class RuleTestReport {

  private RuleTestReport() {}

  public static String diff(Outcome o) {
    StringBuilder b = new StringBuilder();
    o.missing().forEach(p -> b.append("expected, not raised: ").append(clean(p.toString())).append('\n'));
    o.unwanted().forEach(f -> b.append("raised, must not be:  ").append(clean(f.pattern().toString()))
        .append("\n  by: ").append(describe(f.alert())).append('\n'));
    b.append(o.alerts().isEmpty() ? "no alert was raised\n" : "alert records raised, in order:\n");
    o.alerts().forEach(a -> b.append("  ").append(describe(a)).append('\n'));
    if (!o.rejected().isEmpty()) {
      b.append("lines ingest refused:\n");
      o.rejected().forEach(r -> b.append("  ").append(clean(r.file())).append(':').append(r.offset()).append(": ")
          .append(r.code()).append(": ").append(clean(r.reason())).append('\n'));
    }
    return b.toString();
  }

  /** {@code persistent-retry command X agent ci-runner-1 warning firing count 5}. */
  public static String describe(Alert a) {
    return clean(a.rule()) + " command " + clean(a.commandId()) + " agent " + clean(a.agentId()) + " "
        + a.severity().name().toLowerCase(Locale.ROOT) + " " + a.status().name().toLowerCase(Locale.ROOT)
        + " count " + a.count();
  }

  /** The lines and alerts quote what a sandboxed agent may have written: no control characters, bounded. */
  private static String clean(String s) {
    return s == null ? "-" : Sanitize.text(s, 200);
  }
}
