package dev.knockwatch.testkit;

import dev.knockwatch.broker.EmbeddedKafkaBroker;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * One embedded KRaft broker for the whole test suite (the JVM), not one per test class.
 *
 * <p>The broker is kept in the root context's store and closed when the suite ends. Tests get it
 * as a parameter ({@code EmbeddedKafkaBroker broker}); every registry topic exists. Tests share
 * the broker, so each uses its own command ids, group ids and application ids.
 */
public final class EmbeddedKafkaExtension implements BeforeAllCallback, ParameterResolver {

  private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(EmbeddedKafkaExtension.class);

  @Override
  public void beforeAll(ExtensionContext context) {
    broker(context);
  }

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    return parameter.getParameter().getType() == EmbeddedKafkaBroker.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    return broker(context);
  }

  private static EmbeddedKafkaBroker broker(ExtensionContext context) {
    return context.getRoot().getStore(NS)
        .getOrComputeIfAbsent("broker", k -> new Running(startBroker()), Running.class)
        .broker();
  }

  private static EmbeddedKafkaBroker startBroker() {
    try {
      Path dir = Files.createTempDirectory("knockwatch-test-kafka-");
      EmbeddedKafkaBroker broker = EmbeddedKafkaBroker.start(dir, 0);
      broker.createTopics();
      return broker;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Closed by JUnit when the root context closes, i.e. at the end of the suite. */
  private record Running(EmbeddedKafkaBroker broker) implements ExtensionContext.Store.CloseableResource {
    @Override
    public void close() {
      broker.close();
      EmbeddedKafkaBroker.wipe(broker.dataDir());
    }
  }
}
