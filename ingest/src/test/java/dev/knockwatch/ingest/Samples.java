package dev.knockwatch.ingest;

import dev.knockwatch.events.config.ConfigException;
import dev.knockwatch.events.config.KeyValues;
import dev.knockwatch.events.config.YamlFile;
import dev.knockwatch.events.config.YamlNode;
import dev.knockwatch.ingest.spi.SourceFormat;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Every registered format's samples: the real captures in the test resources beside its package
 * ({@code dev/knockwatch/ingest/formats/<name>/samples/}), each with what the sample runner and
 * the property tests need to read it as ingest would: where under the logs root it lies (its
 * {@code -config.yaml}'s {@code file}, else {@code sample-agent/<name>}) and the format's keys
 * ({@code with}). Beside a sample lie its {@code -expected.json} and a {@code README.md} on how the
 * captures were made; neither is a sample.
 */
public record Samples(SourceFormat format, Path sample, String file, KeyValues with) {

  static final String EXPECTED = "-expected.json";
  static final String CONFIG = "-config.yaml";

  @Override
  public String toString() {
    return format.wireName() + ": " + sample.getFileName();
  }

  /** The sample's expected outcomes, beside it. */
  Path expected() {
    return sample.resolveSibling(sample.getFileName() + EXPECTED);
  }

  /** The same file in the source tree, where {@code -Dknockwatch.samples.write=true} writes the expectations. */
  Path expectedInSources() {
    String pkg = format.getClass().getPackageName().replace('.', '/');
    return Path.of("src/test/resources", pkg, "samples", expected().getFileName().toString());
  }

  /** The samples folder of a format (in the test classes): empty when it has none. */
  static Path folder(SourceFormat format) {
    URL url = format.getClass().getResource("samples");
    try {
      return url == null ? null : Path.of(url.toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Every sample of every registered format. */
  public static List<Samples> all() {
    List<Samples> out = new ArrayList<>();
    for (SourceFormat f : Formats.all()) {
      out.addAll(of(f));
    }
    return out;
  }

  /** The samples of one format, by name. */
  public static List<Samples> of(SourceFormat format) {
    Path dir = folder(format);
    if (dir == null) {
      return List.of();
    }
    try (Stream<Path> files = Files.list(dir)) {
      List<Samples> out = new ArrayList<>();
      for (Path p : files.sorted().toList()) {
        String name = p.getFileName().toString();
        if (name.endsWith(EXPECTED) || name.endsWith(CONFIG) || name.equals("README.md")) {
          continue;
        }
        out.add(read(format, p));
      }
      return out;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Samples read(SourceFormat format, Path sample) throws IOException {
    Path config = sample.resolveSibling(sample.getFileName() + CONFIG);
    String file = "sample-agent/" + sample.getFileName();
    KeyValues with = KeyValues.defaults(format.keys());
    if (Files.exists(config)) {
      YamlFile yaml = new YamlFile(config);
      YamlNode root = yaml.read(config).flatMap(yaml::parse).orElse(null);
      Map<String, YamlNode.Entry> keys = root == null ? Map.of()
          : root.mapping(null, Set.of("file", "with")).orElse(Map.of());
      if (keys.containsKey("file")) {
        file = keys.get("file").value().string("file");
      }
      if (keys.containsKey("with")) {
        with = KeyValues.of(keys.get("with").value(), "with", format.keys()).orElse(with);
      }
      if (yaml.problemCount() > 0) {
        throw new ConfigException(yaml.problems());
      }
    }
    return new Samples(format, sample, file, with);
  }
}
