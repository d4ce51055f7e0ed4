package dev.knockwatch.cli;

import dev.knockwatch.cli.run.UsageException;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.knockwatch.broker.KafkaRefusal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code --kafka-config FILE}: on every command that talks to Kafka, read as Kafka reads its --command-config, never printed. */
class KafkaClientOptionsTest {

  static final String SECRET = "s3cret-never-printed";

  @TempDir Path dir;

  @Test
  void everyCommandThatTalksToKafkaTakesIt() {
    Set<String> with = HelpTest.commands().stream()
        .filter(c -> c.getCommandSpec().findOption("--kafka-config") != null)
        .map(c -> c.getCommandSpec().qualifiedName(" "))
        .collect(Collectors.toSet());
    assertThat(with).contains("knockwatch topics", "knockwatch ingest", "knockwatch streams", "knockwatch notify",
        "knockwatch up", "knockwatch silence add", "knockwatch silence list", "knockwatch silence expire");
    for (CommandLine c : HelpTest.commands()) {
      if (c.getCommandSpec().findOption("--bootstrap-servers") != null) {
        assertThat(c.getCommandSpec().findOption("--kafka-config")).as(c.getCommandSpec().qualifiedName()).isNotNull();
      }
    }
  }

  @Test
  void theFileIsJavaPropertiesWithContinuedLines() throws Exception {
    Path f = dir.resolve("kafka.properties");
    Files.writeString(f, """
        # a comment
        security.protocol = SASL_SSL
        sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\
            username="u" password="%s";
        """.formatted(SECRET));
    KafkaClientOptions o = new KafkaClientOptions();
    o.file = f;
    assertThat(o.props()).containsEntry("security.protocol", "SASL_SSL")
        .containsEntry("sasl.jaas.config",
            "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"u\" password=\"" + SECRET + "\";");
  }

  @Test
  void aMissingFileABadEscapeAndBootstrapServersAreUsageErrorsThatQuoteNoValue() throws Exception {
    KafkaClientOptions missing = new KafkaClientOptions();
    missing.file = dir.resolve("nope.properties");
    assertThatThrownBy(missing::props).isInstanceOf(UsageException.class).hasMessageContaining("nope.properties: no such file");
    Path bad = dir.resolve("bad.properties");
    Files.writeString(bad, "ssl.key.password=" + SECRET + "\\u00zz\n");
    KafkaClientOptions badEscape = new KafkaClientOptions();
    badEscape.file = bad;
    assertThatThrownBy(badEscape::props).isInstanceOf(UsageException.class)
        .hasMessageContaining("not readable as Java properties").hasMessageNotContaining(SECRET);
    Path boot = dir.resolve("boot.properties");
    Files.writeString(boot, "bootstrap.servers=k:9092\n");
    KafkaClientOptions withBootstrap = new KafkaClientOptions();
    withBootstrap.file = boot;
    assertThatThrownBy(withBootstrap::props).isInstanceOf(UsageException.class).hasMessageContaining("--bootstrap-servers");
  }

  @Test
  void refusalsAreOneLineAndSecretsAreTakenOut() {
    assertThat(KafkaRefusal.describe(new SaslAuthenticationException("Authentication failed:\n Invalid username or password")))
        .isEqualTo("refused the login: Authentication failed: Invalid username or password");
    assertThat(KafkaRefusal.describe(new TopicAuthorizationException(Set.of("knockwatch.violations"))))
        .startsWith("refused an operation its ACLs do not allow").contains("knockwatch.violations");
    assertThat(KafkaRefusal.describe(new KafkaException("network"))).isNull();
    Map<String, Object> props = Map.of("ssl.keystore.password", SECRET, "security.protocol", "SSL");
    String m = KafkaRefusal.settingsProblem(new KafkaException("Failed to construct kafka consumer",
        new ConfigException("ssl.keystore.password", SECRET, "Invalid value " + SECRET + " and password=\"other\"")), props);
    assertThat(m).startsWith("ConfigException: ").doesNotContain(SECRET, "other").contains("[hidden]");
    assertThat(List.of(m.split("\n"))).hasSize(1);
  }
}
