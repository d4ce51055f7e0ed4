package dev.knockwatch.probes.sandbox;

import java.io.PrintStream;
import java.util.Optional;

/** Everything the probes need to run the real srt here, made ready or explained. */
public final class RealSandbox {

  private RealSandbox() {}

  /**
   * Installs what is missing (when root), finds the bridge, installs its library and checks the
   * network guard.
   *
   * @throws IllegalStateException saying exactly what is missing or broken
   */
  public static SrtBridge prepare(PrintStream say) {
    Prerequisites.ensure(say);
    SrtBridge bridge = SrtBridge.locate().orElseThrow(() -> new IllegalStateException(
        "cannot find " + SrtBridge.RELATIVE_DIR + "/bridge.mjs: run from a knockwatch checkout or set KNOCKWATCH_SRT_BRIDGE"));
    bridge.install(say);
    Optional<String> guard = NetworkGuard.check();
    if (guard.isPresent()) {
      throw new IllegalStateException(guard.get());
    }
    return bridge;
  }
}
