package dev.knockwatch.streams.rules;

import dev.knockwatch.events.Json;
import dev.knockwatch.events.Topics;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/** Writes the policy to the compacted {@code knockwatch.policy} topic, where every streams instance reads it. */
public final class PolicyPublisher {

  private PolicyPublisher() {}

  public static void publish(String bootstrapServers, Map<String, Object> clientProps, PolicyFiles files) {
    Map<String, Object> p = new HashMap<>(clientProps);
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.CLIENT_ID_CONFIG, "knockwatch-policy");
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(p, new StringSerializer(), new StringSerializer())) {
      producer.send(new ProducerRecord<>(Topics.POLICY.name(), PolicyFiles.KEY, Json.write(files))).get(30, TimeUnit.SECONDS);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException("cannot publish the policy to " + Topics.POLICY.name() + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while publishing the policy", e);
    }
  }
}
