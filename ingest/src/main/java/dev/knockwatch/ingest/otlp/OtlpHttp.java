package dev.knockwatch.ingest.otlp;

import com.google.protobuf.CodedOutputStream;
import dev.knockwatch.events.Json;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsPartialSuccess;
import io.opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.zip.GZIPInputStream;

/**
 * OTLP/HTTP's wire, as its specification (opentelemetry-proto {@code docs/specification.md},
 * "OTLP/HTTP") has it: a body in binary protobuf or JSON by its Content-Type, gzip or none, bounded
 * before and after it is inflated (413 past it); the answer in the request's encoding: an
 * {@code ExportLogsServiceResponse}, with {@code partial_success} when records were rejected, or a
 * {@code google.rpc.Status} with a message for a failure.
 */
public final class OtlpHttp {

  private OtlpHttp() {}

  public enum Encoding {
    PROTOBUF("application/x-protobuf"), JSON("application/json");

    public final String contentType;

    Encoding(String contentType) {
      this.contentType = contentType;
    }

    /** The encoding a Content-Type names (its parameters aside); null for any other. */
    public static Encoding of(String contentType) {
      if (contentType == null) {
        return null;
      }
      String t = contentType.split(";", 2)[0].strip().toLowerCase(Locale.ROOT);
      return t.equals(PROTOBUF.contentType) ? PROTOBUF : t.equals(JSON.contentType) ? JSON : null;
    }
  }

  /** A body past the bound: 413, never retried. */
  public static final class TooLarge extends Exception {
    public TooLarge(String message) {
      super(message, null, false, false);
    }
  }

  /** A Content-Encoding other than gzip or none: 415. */
  public static final class Unsupported extends Exception {
    public Unsupported(String message) {
      super(message, null, false, false);
    }
  }

  /**
   * The request's body, inflated when gzip, at most {@code max} bytes either way.
   *
   * @param contentLength the declared length, -1 when none (chunked)
   */
  public static byte[] body(InputStream in, long contentLength, String contentEncoding, int max)
      throws IOException, TooLarge, Unsupported {
    if (contentLength > max) {
      throw new TooLarge("the body is " + contentLength + " bytes, more than the " + max + " this endpoint takes");
    }
    String enc = contentEncoding == null ? "" : contentEncoding.strip().toLowerCase(Locale.ROOT);
    byte[] raw = readAtMost(in, max, "the body");
    if (enc.isEmpty() || enc.equals("identity")) {
      return raw;
    }
    if (!enc.equals("gzip")) {
      throw new Unsupported("Content-Encoding " + enc + " is not one this endpoint reads (gzip, or none)");
    }
    try (InputStream gz = new GZIPInputStream(new java.io.ByteArrayInputStream(raw))) {
      return readAtMost(gz, max, "the inflated body");
    } catch (java.util.zip.ZipException | java.io.EOFException e) {
      throw new Unsupported("the body is not gzip: " + e.getMessage());
    }
  }

  private static byte[] readAtMost(InputStream in, int max, String what) throws IOException, TooLarge {
    ByteArrayOutputStream out = new ByteArrayOutputStream(Math.min(max, 64 * 1024));
    byte[] buf = new byte[16 * 1024];
    long total = 0;
    int n;
    while ((n = in.read(buf)) > 0) {
      total += n;
      if (total > max) {
        throw new TooLarge(what + " is more than the " + max + " bytes this endpoint takes");
      }
      out.write(buf, 0, n);
    }
    return out.toByteArray();
  }

  /** The answer to a request taken: {@code rejected} of its records refused, why in {@code message}. */
  public static byte[] response(Encoding e, long rejected, String message) {
    if (e == Encoding.JSON) {
      Map<String, Object> body = new LinkedHashMap<>();
      if (rejected > 0 || message != null) {
        Map<String, Object> partial = new LinkedHashMap<>();
        partial.put("rejectedLogRecords", Long.toString(rejected));
        partial.put("errorMessage", message == null ? "" : message);
        body.put("partialSuccess", partial);
      }
      return Json.write(body).getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }
    ExportLogsServiceResponse.Builder b = ExportLogsServiceResponse.newBuilder();
    if (rejected > 0 || message != null) {
      b.setPartialSuccess(ExportLogsPartialSuccess.newBuilder().setRejectedLogRecords(rejected)
          .setErrorMessage(message == null ? "" : message));
    }
    return b.build().toByteArray();
  }

  /** A failure's body: a {@code google.rpc.Status} holding only its message (field 2). */
  public static byte[] status(Encoding e, String message) {
    if (e == Encoding.JSON) {
      return Json.write(Map.of("message", message)).getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    CodedOutputStream c = CodedOutputStream.newInstance(out);
    try {
      c.writeString(2, message);
      c.flush();
    } catch (IOException x) {
      throw new java.io.UncheckedIOException(x);
    }
    return out.toByteArray();
  }
}
