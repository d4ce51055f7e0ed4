package dev.knockwatch.cli.bench;

import picocli.CommandLine;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * Benchmarks that run the real parts: {@code bench ingest}, {@code bench streams},
 * {@code bench query}, {@code bench emitter}. Each is one class of this package; the CPU
 * accounting ({@link CpuAccounting}), the figures ({@link Stats}), their report ({@link Report}) and the append-to-alert harness
 * ({@link LatencyHarness}) are shared.
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
    description = "Measure knockwatch on this machine.",
    subcommands = {IngestBench.class, StreamsBench.class, QueryBench.class, EmitterBench.class, HookBench.class, OtlpBench.class,
        ShippersBench.class})
public final class BenchCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @Override
  public Integer call() {
    spec.commandLine().usage(spec.commandLine().getErr());
    return CommandLine.ExitCode.USAGE;
  }
}
