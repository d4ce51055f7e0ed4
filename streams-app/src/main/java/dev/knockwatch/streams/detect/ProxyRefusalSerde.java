package dev.knockwatch.streams.detect;

import dev.knockwatch.streams.state.VersionedBinarySerde;
import dev.knockwatch.streams.detect.BypassDetector.ProxyRefusal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/** The bypass detector's last proxy refusal per command, binary: a network refusal reads one and writes one. */
public final class ProxyRefusalSerde extends VersionedBinarySerde<ProxyRefusal> {

  static final byte VERSION = 1;

  public ProxyRefusalSerde() {
    super(ProxyRefusal.class, "proxy refusal");
  }

  @Override
  protected byte[] encode(ProxyRefusal r) {
    return write(r);
  }

  @Override
  protected ProxyRefusal decode(byte[] bytes) {
    ByteBuffer in = ByteBuffer.wrap(bytes);
    if (in.get() != VERSION) {
      throw new IllegalArgumentException("unknown format version " + bytes[0]);
    }
    long atMs = in.getLong();
    int hostBytes = in.getInt();
    String host = null;
    if (hostBytes >= 0) {
      host = new String(bytes, in.position(), hostBytes, StandardCharsets.UTF_8);
      in.position(in.position() + hostBytes);
    }
    int port = in.getInt();
    return new ProxyRefusal(atMs, host, port < 0 ? null : port);
  }

  static byte[] write(ProxyRefusal r) {
    byte[] host = r.host() == null ? null : r.host().getBytes(StandardCharsets.UTF_8);
    ByteBuffer out = ByteBuffer.allocate(1 + 8 + 4 + (host == null ? 0 : host.length) + 4);
    out.put(VERSION).putLong(r.atMs()).putInt(host == null ? -1 : host.length);
    if (host != null) {
      out.put(host);
    }
    return out.putInt(r.port() == null ? -1 : r.port()).array();
  }
}
