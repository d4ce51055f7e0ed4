package dev.knockwatch.cli;

import dev.knockwatch.events.Durations;
import java.time.Duration;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * picocli's reading of every duration option, as every duration is read ({@link Durations}),
 * longer than zero. A value it refuses is a usage error that names the option and the value
 * ({@link Knockwatch#run}): {@code --for soon is not a duration (e.g. 30m, 2h, 1d, PT2H)}.
 */
final class DurationConverter implements ITypeConverter<Duration> {

  @Override
  public Duration convert(String text) {
    Duration d = Durations.parse(text).orElseThrow(() ->
        new TypeConversionException("is not a duration (e.g. 30m, 2h, 1d, PT2H)"));
    if (d.isZero()) {
      throw new TypeConversionException("must be longer than zero");
    }
    return d;
  }
}
