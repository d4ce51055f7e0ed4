package dev.knockwatch.ingest;

import java.io.IOException;
import java.io.InputStream;

/** The real OTLP bodies the decoders' tests read, for the endpoint's tests too. */
final class OtlpLogsTestResources {

  private OtlpLogsTestResources() {}

  /** A protobuf body Claude Code 2.1.332's exporter sent. */
  static byte[] claudeCodeProtobuf() throws IOException {
    try (InputStream in = OtlpLogsTestResources.class.getResourceAsStream("otlp/claude-code-2.1.332-logs.pb")) {
      return in.readAllBytes();
    }
  }
}
