package dev.knockwatch.cli;

import dev.knockwatch.cli.run.UsageException;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import picocli.CommandLine.Option;

/**
 * {@code --kafka-config FILE}: Kafka client settings (security.protocol, sasl.*, ssl.* ...) in
 * Java properties, the format of Kafka's own {@code --command-config}, for every producer,
 * consumer, admin client and Streams app a command makes. Read once; its values are never
 * printed (an error names the file and the key, not what it holds).
 */
final class KafkaClientOptions {

  @Option(names = "--kafka-config", paramLabel = "FILE", defaultValue = "${env:KNOCKWATCH_KAFKA_CONFIG}",
      description = "Kafka client settings, Java properties as Kafka's --command-config (security.protocol, sasl.*, "
          + "ssl.* ...), for every Kafka client of the command (env KNOCKWATCH_KAFKA_CONFIG).")
  Path file;

  private Map<String, Object> loaded;

  /** The settings of the file (none without one); a missing or unreadable file is a usage error. */
  Map<String, Object> props() {
    if (loaded == null) {
      loaded = file == null ? Map.of() : read(file);
    }
    return loaded;
  }

  private static Map<String, Object> read(Path file) {
    if (!Files.isRegularFile(file)) {
      throw new UsageException("--kafka-config " + file + ": no such file");
    }
    Properties p = new Properties();
    try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      p.load(r);
    } catch (IOException | IllegalArgumentException e) {
      // Properties' own message may quote the line, which may hold a secret
      throw new UsageException("--kafka-config " + file + ": not readable as Java properties ("
          + e.getClass().getSimpleName() + ")");
    }
    Map<String, Object> out = new LinkedHashMap<>();
    for (String key : p.stringPropertyNames()) {
      if (key.equals("bootstrap.servers")) {
        throw new UsageException("--kafka-config " + file + ": bootstrap.servers belongs in --bootstrap-servers");
      }
      out.put(key, p.getProperty(key).trim());
    }
    return Map.copyOf(out);
  }
}
