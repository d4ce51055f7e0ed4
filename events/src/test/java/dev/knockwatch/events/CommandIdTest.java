package dev.knockwatch.events;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CommandIdTest {

  @Test
  void twentyOneCharactersIsTooShort() {
    assertThat(CommandId.problem("a".repeat(21)))
        .contains("commandId is too short: 21 characters, at least 22 required");
  }

  @Test
  void twentyTwoCharactersIsTheShortestValidId() {
    assertThat(CommandId.problem("a".repeat(22))).isEmpty();
    assertThat(new CommandId("xhfHytmXL-L6RsYw2CrSjA").value()).isEqualTo("xhfHytmXL-L6RsYw2CrSjA");
  }

  @Test
  void oneHundredTwentyEightCharactersIsTheLongestValidId() {
    assertThat(CommandId.isValid("Z".repeat(128))).isTrue();
  }

  @Test
  void oneHundredTwentyNineCharactersIsTooLong() {
    assertThat(CommandId.problem("Z".repeat(129)))
        .contains("commandId is too long: 129 characters, at most 128 allowed");
  }

  @Test
  void everyAllowedPunctuationMarkIsAccepted() {
    assertThat(CommandId.isValid("run-1.step_2:attempt-3ab")).isTrue();
  }

  @ParameterizedTest
  @ValueSource(strings = {" ", "/", "+", "=", "<", "\n", "é", "\u202E"})
  void aCharacterOutsideTheAlphabetIsNamedWithItsPosition(String bad) {
    String id = "abcdefghijklmnopqrstu" + bad + "w";
    assertThat(CommandId.problem(id)).contains(
        "commandId has a character outside [A-Za-z0-9._:-] at position 22: U+"
            + String.format("%04X", (int) bad.charAt(0)));
  }

  @Test
  void missingIsItsOwnReason() {
    assertThat(CommandId.problem(null)).contains("commandId is missing");
    assertThat(CommandId.problem("")).contains("commandId is missing");
  }

  @Test
  void theConstructorRefusesAnInvalidIdWithTheReason() {
    assertThatThrownBy(() -> new CommandId("short-id-1"))
        .isInstanceOf(CommandId.InvalidCommandIdException.class)
        .hasMessage("commandId is too short: 10 characters, at least 22 required");
  }
}
