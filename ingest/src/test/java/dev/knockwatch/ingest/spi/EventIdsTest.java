package dev.knockwatch.ingest.spi;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class EventIdsTest {

  @Test
  void theSameLineKeepsItsIdAcrossFilesReadInBetween() {
    String first = EventIds.of("ci-1/a.violations.jsonl", 1234, 0);
    EventIds.of("ci-1/b.violations.jsonl", 1234, 0);
    assertThat(EventIds.of("ci-1/a.violations.jsonl", 1234, 0)).isEqualTo(first).hasSize(32).matches("[0-9a-f]{32}");
  }

  /** Ids must not change between versions: a line re-sent after an upgrade is still the same line. */
  @Test
  void idsAreTheOnesEarlierVersionsGave() {
    assertThat(EventIds.of("ci-1/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl", 0, 0)).isEqualTo("3f0a5c9485b29ddf0000000000000000");
    assertThat(EventIds.of("ci-1/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl", 1234, 2)).isEqualTo("3f0a5c9485b29ddf0000000004d20002");
    assertThat(EventIds.of("ci-1/xhfHytmXL-L6RsYw2CrSjA.violations.jsonl", (1L << 48) - 1, 0xffff))
        .isEqualTo("3f0a5c9485b29ddfffffffffffffffff");
  }

  @Test
  void everyOffsetAndIndexOfAFileHasItsOwnId() {
    Set<String> ids = new HashSet<>();
    for (long offset = 0; offset < 20_000; offset += 7) {
      ids.add(EventIds.of("f", offset, 0));
      ids.add(EventIds.of("f", offset, 1));
    }
    ids.add(EventIds.of("f", (1L << 48) - 1, 0xffff));
    assertThat(ids).hasSize(2 * 2858 + 1);
  }

  @Test
  void theSameOffsetInTwoFilesDiffers() {
    assertThat(EventIds.of("ci-1/a.violations.jsonl", 0, 0)).isNotEqualTo(EventIds.of("ci-2/a.violations.jsonl", 0, 0));
  }

  @Test
  void positionsBeyondTheLayoutAreHashedWhole() {
    String huge = EventIds.of("f", 1L << 48, 0);
    assertThat(huge).matches("[0-9a-f]{32}").isNotEqualTo(EventIds.of("f", 0, 0))
        .doesNotStartWith(EventIds.of("f", 0, 0).substring(0, 16));
    assertThat(EventIds.of("f", 5, 0x10000)).isNotEqualTo(EventIds.of("f", 6, 0)).isNotEqualTo(EventIds.of("f", 5, 0));
  }
}
