package dev.knockwatch.events;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import com.fasterxml.jackson.module.blackbird.BlackbirdModule;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Instant;
import org.apache.kafka.common.errors.SerializationException;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;

/** The one JSON mapping of knockwatch records (ISO-8601 instants, unknown fields tolerated). */
public final class Json {

  public static final ObjectMapper MAPPER = JsonMapper.builder()
      .addModule(new JavaTimeModule())
      // generated accessors instead of reflection: serializing events is on ingest's hot path
      .addModule(new BlackbirdModule())
      .addModule(new SimpleModule("iso-instant").addSerializer(Instant.class, new IsoInstant.Serializer())
          .addDeserializer(Instant.class, new IsoInstant.Deserializer()))
      .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
      .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
      .disable(DeserializationFeature.ADJUST_DATES_TO_CONTEXT_TIME_ZONE)
      .build();

  private Json() {}

  public static String write(Object value) {
    try {
      return MAPPER.writeValueAsString(value);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static <T> T read(String json, Class<T> type) {
    try {
      return MAPPER.readValue(json, type);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Reads violation events: the mapper's deserializer for the type, looked up once. */
  private static final ObjectReader EVENTS = MAPPER.readerFor(ViolationEvent.class);

  /**
   * The Kafka serde of violation events: the bytes and values the mapper's serde gives, written
   * by {@link EventWriter}, which stays only while it is at least twice as fast as the mapper
   * (docs/PERFORMANCE.md "Fast paths"), and read by the mapper.
   */
  public static Serde<ViolationEvent> eventSerde() {
    Serializer<ViolationEvent> serializer = (topic, data) -> data == null ? null : EventWriter.toBytes(data);
    Deserializer<ViolationEvent> deserializer = (topic, data) -> {
      if (data == null) {
        return null;
      }
      try {
        return EVENTS.readValue(data);
      } catch (IOException e) {
        throw new SerializationException("not a ViolationEvent JSON value on " + topic, e);
      }
    };
    return Serdes.serdeFrom(serializer, deserializer);
  }

  /** A Kafka serde for one record type; a null value (a tombstone) stays null both ways. */
  public static <T> Serde<T> serde(Class<T> type) {
    Serializer<T> serializer = (topic, data) -> {
      if (data == null) {
        return null;
      }
      try {
        return MAPPER.writeValueAsBytes(data);
      } catch (JsonProcessingException e) {
        throw new SerializationException("cannot write " + type.getSimpleName() + " as JSON", e);
      }
    };
    Deserializer<T> deserializer = (topic, data) -> {
      if (data == null) {
        return null;
      }
      try {
        return MAPPER.readValue(data, type);
      } catch (IOException e) {
        throw new SerializationException("not a " + type.getSimpleName() + " JSON value on " + topic, e);
      }
    };
    return Serdes.serdeFrom(serializer, deserializer);
  }
}
