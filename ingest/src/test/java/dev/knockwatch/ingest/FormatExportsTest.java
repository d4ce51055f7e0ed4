package dev.knockwatch.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.events.export.Ecs;
import dev.knockwatch.events.export.Ocsf;
import dev.knockwatch.events.export.OcsfSchemaTest;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every event of every format's samples leaves for a SIEM as a valid record: in OCSF, each with
 * its format's own mapping where it has one ({@code SourceFormat.ocsf}), validated against the
 * OCSF 1.3.0 definitions of its class and objects; in ECS, a document that says what it is.
 */
class FormatExportsTest {

  static List<Samples> samples() {
    return Samples.all();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("samples")
  void everySampleEventIsAValidOcsfRecordAndAnEcsDocument(Samples s, @TempDir Path logs) throws Exception {
    for (ViolationEvent e : FormatSamplesTest.read(s, logs).sink().events) {
      ObjectNode ocsf = Ocsf.event(e);
      assertThat(OcsfSchemaTest.problems(ocsf)).as("%s: %s", s, ocsf).isEmpty();
      ObjectNode ecs = Ecs.event(e);
      assertThat(ecs.path("event").path("kind").asText()).as("%s: %s", s, ecs).isEqualTo("event");
      assertThat(ecs.path("event").path("provider").asText()).isEqualTo(e.source());
    }
  }
}
