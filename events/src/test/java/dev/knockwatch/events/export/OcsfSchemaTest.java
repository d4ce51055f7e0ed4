package dev.knockwatch.events.export;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.ViolationEvent;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Every OCSF record knockwatch writes validates against the OCSF 1.3.0 definitions of its class
 * and of every object in it: each attribute is one the schema declares there, of the declared
 * type; every required attribute is present (a profile's only when the record names the profile);
 * enum ids are declared and their captions agree; type_uid and category_uid follow from the class.
 * The definitions are the subset of the schema in {@code export/ocsf-1.3.0-subset.json}, which
 * says where it came from.
 */
public class OcsfSchemaTest {

  static final JsonNode SCHEMA = load();

  private static JsonNode load() {
    try (InputStream in = OcsfSchemaTest.class.getResourceAsStream("/export/ocsf-1.3.0-subset.json")) {
      return Json.MAPPER.readTree(in);
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }

  /** Every way {@code record} breaks the schema subset; empty when it validates. */
  public static List<String> problems(JsonNode record) {
    List<String> out = new ArrayList<>();
    JsonNode cls = SCHEMA.path("classes").path(record.path("class_uid").asText());
    if (cls.isMissingNode()) {
      out.add("class_uid " + record.path("class_uid") + " is not one of the subset's classes");
      return out;
    }
    if (!SCHEMA.path("version").asText().equals(record.at("/metadata/version").asText())) {
      out.add("metadata.version " + record.at("/metadata/version") + " is not " + SCHEMA.path("version").asText());
    }
    Set<String> profiles = new HashSet<>();
    for (JsonNode p : record.at("/metadata/profiles")) {
      if (!SCHEMA.path("profiles").has(p.asText())) {
        out.add("metadata.profiles: " + p + " is not a 1.3.0 profile");
      }
      profiles.add(p.asText());
    }
    object(record, cls.path("attributes"), "", profiles, out);
    if (record.path("category_uid").asInt() != cls.path("category_uid").asInt()) {
      out.add("category_uid " + record.path("category_uid") + " is not the class's " + cls.path("category_uid"));
    }
    caption(record, "category_uid", "category_name", SCHEMA.path("categories"), out);
    if (record.path("type_uid").asLong() != record.path("class_uid").asLong() * 100 + record.path("activity_id").asLong()) {
      out.add("type_uid " + record.path("type_uid") + " is not class_uid * 100 + activity_id");
    }
    for (Iterator<Map.Entry<String, JsonNode>> it = SCHEMA.path("enums").fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      caption(record, e.getKey(), e.getKey().substring(0, e.getKey().length() - 3), e.getValue(), out);
    }
    for (Iterator<Map.Entry<String, JsonNode>> it = cls.path("enums").fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      caption(record, e.getKey(), e.getKey().substring(0, e.getKey().length() - 3), e.getValue(), out);
    }
    return out;
  }

  /** The attributes of one object (or the record) against their definitions. */
  private static void object(JsonNode value, JsonNode attributes, String at, Set<String> profiles, List<String> out) {
    for (Iterator<Map.Entry<String, JsonNode>> it = attributes.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> a = it.next();
      if (a.getValue().path("required").asBoolean() && !value.has(a.getKey()) && !waived(a.getKey(), profiles)) {
        out.add(at + a.getKey() + " is required");
      }
    }
    for (Iterator<Map.Entry<String, JsonNode>> it = value.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> f = it.next();
      JsonNode def = attributes.get(f.getKey());
      if (def == null) {
        out.add(at + f.getKey() + " is not an attribute of the schema here");
      } else {
        typed(f.getValue(), def.path("type").asText(), at + f.getKey(), profiles, out);
      }
    }
  }

  private static void typed(JsonNode v, String type, String at, Set<String> profiles, List<String> out) {
    if (type.startsWith("array:")) {
      if (!v.isArray()) {
        out.add(at + " is not an array");
        return;
      }
      for (int i = 0; i < v.size(); i++) {
        typed(v.get(i), type.substring("array:".length()), at + "[" + i + "]", profiles, out);
      }
      return;
    }
    if (type.startsWith("object:")) {
      String name = type.substring("object:".length());
      JsonNode obj = SCHEMA.path("objects").path(name);
      if (!v.isObject()) {
        out.add(at + " is not an object");
      } else if (obj.isMissingNode()) {
        out.add(at + ": the object " + name + " is not in the subset (add its 1.3.0 definition)");
      } else {
        object(v, obj.path("attributes"), at + ".", profiles, out);
      }
      return;
    }
    boolean ok = switch (type) {
      case "string" -> v.isTextual();
      case "int" -> v.isInt();
      case "long" -> v.isIntegralNumber();
      case "bool" -> v.isBoolean();
      case "object" -> v.isObject();
      default -> false;
    };
    if (!ok) {
      out.add(at + " is " + v.getNodeType() + ", not " + type);
    }
  }

  /** A required attribute of a profile the record does not apply. */
  private static boolean waived(String attribute, Set<String> profiles) {
    for (JsonNode p : SCHEMA.path("conditionalProfiles")) {
      for (JsonNode a : SCHEMA.path("profiles").path(p.asText())) {
        if (a.asText().equals(attribute) && !profiles.contains(p.asText())) {
          return true;
        }
      }
    }
    return false;
  }

  /** The id is one the enum declares, and its sibling, when given, is that id's caption. */
  private static void caption(JsonNode record, String id, String sibling, JsonNode captions, List<String> out) {
    if (!record.has(id)) {
      return;
    }
    JsonNode c = captions.get(record.get(id).asText());
    if (c == null) {
      out.add(id + " " + record.get(id) + " is not declared");
    } else if (record.has(sibling) && !c.asText().equals(record.get(sibling).asText())) {
      out.add(sibling + " \"" + record.get(sibling).asText() + "\" is not the caption of " + id + " " + record.get(id)
          + " (" + c.asText() + ")");
    }
  }

  @Test
  void theGoldenRecordsValidate() {
    assertThat(problems(Ocsf.event(ExportFormatsTest.network()))).isEmpty();
    assertThat(problems(Ocsf.event(ExportFormatsTest.proxy()))).isEmpty();
    assertThat(problems(Ocsf.event(ExportFormatsTest.file()))).isEmpty();
    // a call that asked for no sandbox is Process Activity, its outcome unknown, not a refused connection
    com.fasterxml.jackson.databind.JsonNode escape = Ocsf.event(ExportFormatsTest.escape());
    assertThat(problems(escape)).isEmpty();
    assertThat(escape.path("class_uid").asInt()).isEqualTo(1007);
    assertThat(escape.path("process").path("cmd_line").asText()).isEqualTo("curl -sS https://example.com");
    assertThat(escape.path("action").asText()).isEqualTo("Unknown");
    assertThat(escape.path("unmapped").path("taskId").asText()).isEqualTo("t-1");
    assertThat(Ecs.event(ExportFormatsTest.escape()).path("event").path("type").get(0).asText()).isEqualTo("info");
    // what a wall in audit mode let through: allowed and logged (OCSF's disposition 17), traffic, not a refusal
    com.fasterxml.jackson.databind.JsonNode audited = Ocsf.event(ExportFormatsTest.network().toBuilder().enforced(false).build());
    assertThat(problems(audited)).isEmpty();
    assertThat(audited.path("action").asText()).isEqualTo("Allowed");
    assertThat(audited.path("disposition_id").asInt()).isEqualTo(17);
    assertThat(audited.path("status").asText()).isEqualTo("Success");
    assertThat(audited.path("activity_name").asText()).isEqualTo("Traffic");
    assertThat(audited.path("type_uid").asLong()).isEqualTo(400106L);
    com.fasterxml.jackson.databind.JsonNode ecs = Ecs.event(ExportFormatsTest.network().toBuilder().enforced(false).build());
    assertThat(ecs.path("event").path("type").get(0).asText()).isEqualTo("allowed");
    assertThat(ecs.path("event").path("outcome").asText()).isEqualTo("success");
    for (Alert.Status s : Alert.Status.values()) {
      assertThat(problems(Ocsf.finding(ExportFormatsTest.alert(s)))).as(s.name()).isEmpty();
    }
  }

  /**
   * Events of every kind and source with random, hostile or missing fields, and alerts of every
   * severity and status with and without metadata: every record validates. A field left out must
   * not leave a required attribute out; a hostile value must not change a type.
   */
  @Test
  void everyRecordValidatesWhateverTheAgentWrote() {
    Random random = new Random(1_300);
    String[] hostile = {"", "x", "\u0000", "\ud800", "\u202eevil", "a\nb", "%s%n", "x".repeat(5_000), "{\"a\":1}", "-1"};
    Integer[] ports = {null, 0, 1, 443, 65535};
    for (int i = 0; i < 3_000; i++) {
      ViolationEvent.Builder b = ExportFormatsTest.network().toBuilder()
          .kind(Kind.values()[random.nextInt(Kind.values().length)])
          .source(List.of("srt-violation", "proxy-403", "squid", "strace", "json", "claude-code").get(random.nextInt(6)))
          .host(random.nextInt(4) == 0 ? null : hostile[random.nextInt(hostile.length)])
          .port(ports[random.nextInt(ports.length)])
          .path(random.nextBoolean() ? null : hostile[random.nextInt(hostile.length)])
          .newPath(random.nextInt(3) == 0 ? hostile[random.nextInt(hostile.length)] : null)
          .url(random.nextBoolean() ? null : hostile[random.nextInt(hostile.length)])
          .commandText(random.nextBoolean() ? null : hostile[random.nextInt(hostile.length)])
          .reason(random.nextBoolean() ? null : hostile[random.nextInt(hostile.length)])
          .agentId(random.nextBoolean() ? null : hostile[random.nextInt(hostile.length)]);
      if (random.nextBoolean()) {
        b.pid(random.nextInt(1 << 22)).syscall("openat").errno("EPERM");
      }
      if (random.nextBoolean()) {
        // a packet a wall that names no command refused
        b.commandId(null).commandUnknown(true).protocol(random.nextBoolean() ? "tcp" : hostile[random.nextInt(hostile.length)])
            .sourceAddress(random.nextBoolean() ? null : hostile[random.nextInt(hostile.length)])
            .sourcePort(ports[random.nextInt(ports.length)])
            .subject(new ViolationEvent.Subject("netfilter", hostile[random.nextInt(hostile.length)]));
      }
      ViolationEvent e = b.build();
      assertThat(problems(Ocsf.event(e))).as("%s", e).isEmpty();
    }
    for (Alert.Severity severity : Alert.Severity.values()) {
      for (Alert.Status status : Alert.Status.values()) {
        Alert a = ExportFormatsTest.alert(status);
        for (Alert.Meta meta : new Alert.Meta[] {null, new Alert.Meta(List.of("attack.t1046.001", "\u202e", "T9999"),
            "javascript:alert(1)", Map.of("team", "\u0000"), Map.of())}) {
          Alert x = a.toBuilder().severity(severity).status(status).meta(meta).build();
          assertThat(problems(Ocsf.finding(x))).as("%s %s %s", severity, status, meta).isEmpty();
        }
      }
    }
  }

  /** The validator is not a rubber stamp: each kind of break is named. */
  @Test
  void eachBreakIsNamed() {
    ObjectNode r = Ocsf.event(ExportFormatsTest.file());
    r.put("colour", "red");
    ((ObjectNode) r.get("file")).remove("type_id");
    ((ObjectNode) r.get("actor")).putObject("process").put("pid", "4242");
    r.put("disposition", "Allowed");
    r.put("severity_id", 7);
    r.put("type_uid", 100101);
    r.remove("time");
    ((ObjectNode) r.get("metadata")).putArray("profiles").add("security_control").add("made_up");
    assertThat(problems(r)).containsExactlyInAnyOrder(
        "metadata.profiles: \"made_up\" is not a 1.3.0 profile",
        "time is required",
        "colour is not an attribute of the schema here",
        "file.type_id is required",
        "actor.process.pid is STRING, not int",
        "type_uid 100101 is not class_uid * 100 + activity_id",
        "severity_id 7 is not declared",
        "disposition \"Allowed\" is not the caption of disposition_id 2 (Blocked)");
    ObjectNode noProfile = Ocsf.event(ExportFormatsTest.network());
    noProfile.remove("action_id");
    assertThat(problems(noProfile)).containsExactly("action_id is required");
    ((ObjectNode) noProfile.get("metadata")).putArray("profiles");
    assertThat(problems(noProfile)).as("the security-control profile not applied: its action_id is not required").isEmpty();
  }
}
