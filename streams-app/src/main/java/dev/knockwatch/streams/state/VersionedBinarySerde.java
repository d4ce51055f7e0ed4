package dev.knockwatch.streams.state;

import dev.knockwatch.events.Json;
import java.io.IOException;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serializer;

/**
 * A state store's values in a compact binary form, for the stores every refusal reads and writes
 * (as JSON, Jackson took a tenth of the detection thread for each). The first byte of a value is
 * its format version, which can never start a JSON text, so values an earlier version wrote as
 * JSON (in a changelog being restored) are still read, as JSON.
 */
public abstract class VersionedBinarySerde<T> implements Serde<T> {

  private final Deserializer<T> json;
  private final String what;

  /** {@code what} names a value in the error for bytes of another format. */
  protected VersionedBinarySerde(Class<T> type, String what) {
    this.json = Json.serde(type).deserializer();
    this.what = what;
  }

  /** The value's bytes, its format version first. */
  protected abstract byte[] encode(T value);

  /** A value from its bytes; throws on bytes of another format or version. */
  protected abstract T decode(byte[] bytes) throws IOException;

  @Override
  public Serializer<T> serializer() {
    return (topic, value) -> value == null ? null : encode(value);
  }

  @Override
  public Deserializer<T> deserializer() {
    return (topic, bytes) -> {
      if (bytes == null) {
        return null;
      }
      if (bytes.length > 0 && bytes[0] == '{') {
        return json.deserialize(topic, bytes);
      }
      try {
        return decode(bytes);
      } catch (IOException | RuntimeException e) {
        throw new SerializationException("not a " + what + " value (" + bytes.length + " bytes)", e);
      }
    };
  }
}
