package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class InstanceIdTest {

  @TempDir Path dir;

  @Test
  void oneVarKeepsOneIdAndAnotherVarGetsItsOwn() {
    Path var = dir.resolve("var");
    String id = InstanceId.of(var);
    assertThat(id).matches("[A-Za-z0-9_-]{22}");
    assertThat(InstanceId.of(var)).as("read back, as after a restart").isEqualTo(id);
    assertThat(InstanceId.of(dir.resolve("other-var"))).isNotEqualTo(id);
  }

  @Test
  void aDamagedFileIsReplacedNotUsed() throws Exception {
    Files.writeString(Files.createDirectories(dir).resolve(InstanceId.FILE), "../../etc\u0000 x\n");
    String id = InstanceId.of(dir);
    assertThat(id).matches("[A-Za-z0-9_-]{22}");
    assertThat(Files.readString(dir.resolve(InstanceId.FILE)).strip()).isEqualTo(id);
  }
}
