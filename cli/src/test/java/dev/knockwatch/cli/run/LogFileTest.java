package dev.knockwatch.cli.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@code up}'s log: everything to the file; on the terminal, knockwatch's problems and anyone's errors. */
class LogFileTest {

  @TempDir Path var;

  @Test
  void kafkasExpectedWarningsStayInTheFileProblemsReachTheTerminalToo() throws Exception {
    PrintStream terminal = System.err;
    ByteArrayOutputStream seen = new ByteArrayOutputStream();
    System.setErr(new PrintStream(seen, true, StandardCharsets.UTF_8));
    try {
      Path file = LogFile.divert(var);
      assertThat(file).isEqualTo(var.resolve("log/knockwatch.log"));
      Logger kafka = LoggerFactory.getLogger("org.apache.kafka.controller.QuorumController");
      Logger ours = LoggerFactory.getLogger("dev.knockwatch.ingest.IngestAgent");
      kafka.warn("The metadata log appears to be empty");
      kafka.error("Error processing append operation on partition");
      ours.info("created topics");
      ours.warn("Kafka does not take batches: reading stopped");
      String onTerminal = seen.toString(StandardCharsets.UTF_8);
      assertThat(onTerminal).contains("WARN IngestAgent - Kafka does not take batches", "ERROR QuorumController - Error")
          .doesNotContain("metadata log appears to be empty", "created topics");
      String inFile = Files.readString(file);
      assertThat(inFile).contains("WARN [main] org.apache.kafka.controller.QuorumController - The metadata log appears",
          "ERROR [main] org.apache.kafka.controller.QuorumController - Error processing",
          "INFO [main] dev.knockwatch.ingest.IngestAgent - created topics",
          "WARN [main] dev.knockwatch.ingest.IngestAgent - Kafka does not take batches");
    } finally {
      System.setErr(terminal);
      // the other tests of this JVM log as the shipped logback.xml says
      ch.qos.logback.classic.LoggerContext ctx = (ch.qos.logback.classic.LoggerContext) LoggerFactory.getILoggerFactory();
      ctx.reset();
      new ch.qos.logback.classic.util.ContextInitializer(ctx).autoConfig();
    }
  }
}
