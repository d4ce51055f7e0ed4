package dev.knockwatch.cli.run;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.FileAppender;
import ch.qos.logback.core.filter.Filter;
import ch.qos.logback.core.spi.FilterReply;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.slf4j.LoggerFactory;

/**
 * {@code up}'s log: every line of the process's loggers (Kafka's, Kafka Streams', knockwatch's) to
 * one file, and on the terminal only what needs its reader: knockwatch's warnings and errors, and
 * any library's errors. Kafka's expected start and stop warnings (an empty metadata log, topics a
 * Streams app is about to create, a client closed twice) stay in the file.
 */
public final class LogFile {
  /** Where under {@code var/} the log is. */
  public static final String PATH = "log/knockwatch.log";

  private LogFile() {}

  /** Adds the file (appended to across runs) and narrows the terminal; returns the file. */
  public static Path divert(Path var) throws IOException {
    Path file = var.resolve(PATH);
    Files.createDirectories(file.getParent());
    if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext ctx)) {
      return file; // another SLF4J provider (a test's): its own settings stand
    }
    Logger root = ctx.getLogger(Logger.ROOT_LOGGER_NAME);
    PatternLayoutEncoder encoder = new PatternLayoutEncoder();
    encoder.setContext(ctx);
    encoder.setPattern("%d{yyyy-MM-dd'T'HH:mm:ss.SSSX,UTC} %level [%thread] %logger - %msg%n");
    encoder.start();
    FileAppender<ILoggingEvent> appender = new FileAppender<>();
    appender.setContext(ctx);
    appender.setName("FILE");
    appender.setFile(file.toString());
    appender.setAppend(true);
    appender.setEncoder(encoder);
    appender.start();
    root.addAppender(appender);
    Appender<ILoggingEvent> terminal = root.getAppender("TERMINAL");
    if (terminal != null) {
      terminal.addFilter(new Filter<>() {
        @Override
        public FilterReply decide(ILoggingEvent e) {
          return terminalShows(e.getLoggerName(), e.getLevel()) ? FilterReply.NEUTRAL : FilterReply.DENY;
        }
      });
    }
    return file;
  }

  /** What reaches the terminal besides the file: knockwatch's warnings and errors, anyone's errors. */
  static boolean terminalShows(String logger, Level level) {
    return level.isGreaterOrEqual(Level.ERROR)
        || level.isGreaterOrEqual(Level.WARN) && logger != null && logger.startsWith("dev.knockwatch.");
  }
}
