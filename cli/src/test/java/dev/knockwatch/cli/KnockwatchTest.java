package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

/** The command-line contract: exit codes 0 / 1 / 2 and one-line errors without stack traces. */
class KnockwatchTest {

  record Run(int code, String out, String err) {}

  static Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code = Knockwatch.run(new PrintWriter(out, true), new PrintWriter(err, true), args);
    return new Run(code, out.toString(), err.toString());
  }

  @Test
  void helpListsTheSubcommandsAndExitsZero() {
    Run r = run("--help");
    assertThat(r.code()).isZero();
    assertThat(r.out()).contains("up ", "replay ");
  }

  @Test
  void everySubcommandHasHelp() {
    assertThat(run("up", "--help").out()).contains("--logs=DIR", "--rules=DIR", "--metrics-port=N", "--api-port=N",
        "--no-probes", "--fresh", "--bootstrap-servers=HOSTS");
    assertThat(run("replay", "--help").out()).contains("--rules=DIR", "--input=PATH");
  }

  @Test
  void anUnknownOptionIsAUsageErrorOnOneLine() {
    Run r = run("up", "--bogus");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).isEqualTo("knockwatch: Unknown option: '--bogus' (see --help)" + System.lineSeparator());
  }

  @Test
  void noSubcommandShowsUsageAndIsAUsageError() {
    Run r = run();
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).contains("Usage: knockwatch");
  }

  @Test
  void replayNeedsInput() {
    Run r = run("replay");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).startsWith("knockwatch: Missing required option: '--input=PATH'");
  }

  @Test
  void aMissingRulesDirectoryIsAUsageError() {
    Run r = run("replay", "--rules", "no/such/dir", "--input", ".");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).isEqualTo("knockwatch: rules directory no/such/dir does not exist" + System.lineSeparator());
  }

  @Test
  void aMissingInputIsAUsageError() {
    Run r = run("replay", "--rules", "../alert-rules", "--input", "no/such/input");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).isEqualTo("knockwatch: input no/such/input does not exist" + System.lineSeparator());
  }

  @Test
  void aBadPortIsAUsageError() {
    Run r = run("up", "--rules", "../alert-rules", "--metrics-port", "70000");
    assertThat(r.code()).isEqualTo(2);
    assertThat(r.err()).isEqualTo("knockwatch: --metrics-port 70000 is not a port (0-65535)" + System.lineSeparator());
  }
}
