package dev.knockwatch.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.knockwatch.ingest.spi.SourceFormat;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The formats' tables in docs/FORMATS.md and docs/TRUST.md are the formats' own
 * declarations: a format added, or a skip reason, key or trust row changed, fails here until the
 * documents follow ({@code -Dknockwatch.docs.write=true} writes them).
 */
class FormatsReferenceTest {

  private static final boolean WRITE = Boolean.getBoolean("knockwatch.docs.write");

  @Test
  void theDocumentsHoldWhatTheFormatsDeclare() throws IOException {
    for (FormatsReference.Section s : FormatsReference.sections()) {
      Path doc = Path.of("..").resolve(s.document());
      String text = Files.readString(doc);
      int begin = text.indexOf(s.begin());
      int end = text.indexOf(s.end());
      assertThat(begin).as("%s holds the line %s", s.document(), s.begin()).isNotNegative();
      assertThat(end).as("%s holds the line %s", s.document(), s.end()).isGreaterThan(begin);
      String inDoc = text.substring(begin + s.begin().length(), end).strip();
      if (WRITE) {
        Files.writeString(doc, text.substring(0, begin + s.begin().length()) + "\n" + s.markdown() + text.substring(end));
      } else {
        assertThat(inDoc).as("%s's %s differs from the formats' declarations: run this test with"
            + " -Dknockwatch.docs.write=true and review the diff", s.document(), s.name()).isEqualTo(s.markdown().strip());
      }
    }
  }

  @Test
  void everyFormatIsNamedOnceAndDeclaresWhatTheTablesNeed() {
    Set<String> names = new HashSet<>();
    for (SourceFormat f : Formats.all()) {
      assertThat(names.add(f.wireName())).as("%s is one format's name", f.wireName()).isTrue();
      assertThat(f.summary()).as(f.wireName()).isNotBlank();
      assertThat(f.yields()).as(f.wireName()).isNotBlank();
      assertThat(f.trust().writer()).as(f.wireName()).isNotBlank();
      assertThat(f.trust().believed()).as(f.wireName()).isNotBlank();
      assertThat(f.trust().agentWrites()).as(f.wireName()).isNotBlank();
      f.skips().forEach(s -> assertThat(s.reason()).as(f.wireName()).matches("[a-z][a-z-]*").isNotEqualTo("blank"));
      f.keys().forEach(k -> assertThat(k.doc()).as(f.wireName() + "." + k.name()).isNotBlank());
      assertThat(f.getClass().getPackageName()).as("%s lives in its own folder under ingest/formats/", f.wireName())
          .startsWith("dev.knockwatch.ingest.formats.");
    }
    assertThat(names).contains("srt-violation", "proxy-403", "squid", "json", "strace", "claude-code", "probe-result");
  }
}
