package dev.knockwatch.streams.detect;

import dev.knockwatch.events.Json;
import dev.knockwatch.streams.detect.BypassProcessor.ProxyRefusal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;

/**
 * The bypass detector's last proxy refusal per command, in a compact binary form: a network
 * refusal reads one and writes one, and as JSON both went through Jackson. As in the count
 * windows' serde, the first byte is a format version, which never starts a JSON text, so values
 * an earlier version wrote as JSON (in a changelog being restored) are still read.
 */
public final class ProxyRefusalSerde implements Serde<ProxyRefusal> {

  static final byte VERSION = 1;
  private static final Deserializer<ProxyRefusal> JSON = Json.serde(ProxyRefusal.class).deserializer();

  @Override
  public Serializer<ProxyRefusal> serializer() {
    return (topic, r) -> r == null ? null : write(r);
  }

  @Override
  public Deserializer<ProxyRefusal> deserializer() {
    return (topic, bytes) -> {
      if (bytes == null) {
        return null;
      }
      if (bytes.length > 0 && bytes[0] == '{') {
        return JSON.deserialize(topic, bytes);
      }
      try {
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
      } catch (RuntimeException e) { // a short buffer, a length past its end
        throw new SerializationException("not a proxy refusal value (" + bytes.length + " bytes)", e);
      }
    };
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
