package dev.knockwatch.probes.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class SrtBridgeTest {

  @Test
  void aFailedBridgeSaysWhyInOneLine() {
    assertThat(SrtBridge.why("(node:12) ExperimentalWarning: ...\nknockwatch-srt-bridge: cannot read settings /x.json: ENOENT\n"))
        .isEqualTo("knockwatch-srt-bridge: cannot read settings /x.json: ENOENT");
    assertThat(SrtBridge.why("node:internal/modules/cjs/loader:1210\n  throw err;\n  ^\n\n"
        + "Error: Cannot find module '/opt/bridge.mjs'\n    at Module._resolveFilename (node:internal)\n\nNode.js v20.20.2\n"))
        .isEqualTo("Error: Cannot find module '/opt/bridge.mjs'");
    assertThat(SrtBridge.why("first\nlast words\u001b[31m\n")).isEqualTo("last words [31m");
    assertThat(SrtBridge.why("  \n")).isEqualTo("no message");
    assertThat(SrtBridge.why("x".repeat(10_000))).hasSizeLessThanOrEqualTo(301);
  }
}
