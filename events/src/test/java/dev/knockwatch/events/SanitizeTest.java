package dev.knockwatch.events;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SanitizeTest {

  @Test
  void controlCharactersBecomeSpaces() {
    assertThat(Sanitize.text("evil.test\r\nALERT resolved\u001b[2J", 100))
        .isEqualTo("evil.test  ALERT resolved [2J");
  }

  @Test
  void bidiOverridesCannotReverseWhatTheAnalystReads() {
    assertThat(Sanitize.text("safe\u202Egnp.exe", 100)).isEqualTo("safe gnp.exe");
    assertThat(Sanitize.text("a\u2066b\u2069c", 100)).isEqualTo("a b c");
  }

  @Test
  void longTextIsCutAndTheCutIsMarked() {
    assertThat(Sanitize.text("abcdef", 3)).isEqualTo("abc…");
    assertThat(Sanitize.text("abc", 3)).isEqualTo("abc");
  }

  @Test
  void aCutNeverSplitsASurrogatePair() {
    assertThat(Sanitize.text("ab\uD83D\uDE00", 3)).isEqualTo("ab…");
  }

  @Test
  void codePointsThatAreNoCharactersBecomeTheReplacementCharacterAndAreCounted() {
    long before = Sanitize.replaced();
    assertThat(Sanitize.text("curl -d '{\"a\":1}' \ud800", 100)).isEqualTo("curl -d '{\"a\":1}' \uFFFD");
    assertThat(Sanitize.text("\udc00x\ud83dy\uFFFE\uFFFF", 100)).isEqualTo("\uFFFDx\uFFFDy\uFFFD\uFFFD");
    assertThat(Sanitize.text("ok \uD83D\uDE00 pair", 100)).isEqualTo("ok \uD83D\uDE00 pair");
    assertThat(Sanitize.replaced() - before).isEqualTo(5);
  }

  @Test
  void anEventsFieldsAreMadeSafeAndBoundedAndASafeEventIsLeftAsItIs() {
    ViolationEvent safe = ViolationEvent.builder().commandId("xhfHytmXL-L6RsYw2CrSjA").host("evil.test")
        .commandText("curl https://evil.test").origin(new ViolationEvent.Origin("a/b.violations.jsonl", 0, "h")).build();
    assertThat(Sanitize.event(safe)).isSameAs(safe);
    ViolationEvent hostile = safe.toBuilder().host("evil\u202e.test\ud800").commandText("x".repeat(100_000))
        .reason("a\u0000b").origin(new ViolationEvent.Origin("a/\u001b[2J.violations.jsonl", 7, "h")).build();
    ViolationEvent made = Sanitize.event(hostile);
    assertThat(made.host()).isEqualTo("evil .test\uFFFD");
    assertThat(made.commandText()).hasSize(Sanitize.MAX_COMMAND_CHARS + 1).endsWith("x…");
    assertThat(made.reason()).isEqualTo("a b");
    assertThat(made.origin()).isEqualTo(new ViolationEvent.Origin("a/ [2J.violations.jsonl", 7, "h"));
    assertThat(made.commandId()).isEqualTo(safe.commandId());
  }

  @Test
  void nullStaysNull() {
    assertThat(Sanitize.text(null, 3)).isNull();
  }
}
