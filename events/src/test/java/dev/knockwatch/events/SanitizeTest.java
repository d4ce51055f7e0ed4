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
  void nullStaysNull() {
    assertThat(Sanitize.text(null, 3)).isNull();
  }
}
