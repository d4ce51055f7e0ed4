package dev.knockwatch.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.knockwatch.events.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * What {@code allowlist suggest} prints from the API's answer, whatever the agent put in a host or
 * an agent's name: the roles entry parses as YAML and lists exactly the role's hosts and the
 * proposed ones; comments hold no line break, control or bidi character; srt's and Claude Code's
 * settings list only the proposed names.
 */
class AllowlistCommandTest {

  static final String[] PIECES = {"\u202e", "\u2066", "\u0000", "\n", "\r", "\u0007", "\ud800", "\"", "'", "#", ": ",
      "- ", "*", "<img src=x onerror=alert(1)>", "${jndi:x}", "\\", "é", "x"};

  static String hostile(Random r) {
    StringBuilder b = new StringBuilder();
    for (int i = r.nextInt(8); i >= 0; i--) {
      b.append(PIECES[r.nextInt(PIECES.length)]);
    }
    return r.nextInt(20) == 0 ? b.append("W".repeat(5000)).toString() : b.toString();
  }

  static ObjectNode answer(Random r, List<String> proposed) {
    ObjectNode a = Json.MAPPER.createObjectNode().put("since", hostile(r)).put("until", "2026-12-05T00:00:00Z");
    ObjectNode role = a.putArray("roles").addObject().put("role", "ci").put("dropped", r.nextInt(3)).put("destinations", 9);
    role.putArray("allows").add("api.github.com:443");
    ArrayNode hosts = role.putArray("hosts");
    for (int i = 0; i < 8; i++) {
      boolean ok = r.nextBoolean();
      String host = ok ? "h" + i + ".example.org" : hostile(r);
      ObjectNode h = hosts.addObject().put("target", host + ":443").put("host", host).put("port", 443)
          .put("refusals", r.nextInt(100)).put("commands", 1 + r.nextInt(5)).put("tasks", 1).put("agents", 1)
          .put("lastSeen", hostile(r)).put("inRole", false).put("proposed", ok);
      h.putArray("risks").addObject().put("code", "single-command").put("note", hostile(r));
      if (ok) {
        proposed.add(host);
      }
    }
    return a;
  }

  @Test
  void hostileHostsNotesAndTimesNeverBreakTheYamlOrReachAList() throws Exception {
    Random r = new Random(48);
    for (int run = 0; run < 500; run++) {
      List<String> proposed = new ArrayList<>();
      JsonNode a = answer(r, proposed);
      String roles = AllowlistCommand.roles(a, "allowlist suggest --role ci");
      for (String line : roles.split("\n", -1)) {
        assertThat(line).doesNotContain("\r", "\u0000", "\u0007", "\u202e", "\u2066");
        assertThat(line.strip().isEmpty() || line.startsWith("roles:") || line.strip().startsWith("#")
            || line.startsWith("  \"ci\":") || line.equals("    hosts:") || line.startsWith("      - \"")).as(line).isTrue();
      }
      Map<String, Map<String, Map<String, List<String>>>> yaml = new Yaml().load(roles);
      List<String> expected = new ArrayList<>(List.of("api.github.com:443"));
      proposed.forEach(p -> expected.add(p + ":443"));
      assertThat(yaml.get("roles").get("ci").get("hosts")).isEqualTo(expected);
      for (boolean claude : new boolean[] {false, true}) {
        JsonNode settings = Json.MAPPER.readTree(AllowlistCommand.domains(a, claude));
        JsonNode list = claude ? settings.path("sandbox").path("network").path("allowedDomains")
            : settings.path("network").path("allowedDomains");
        List<String> names = new ArrayList<>();
        list.forEach(n -> names.add(n.asText()));
        assertThat(names).isEqualTo(proposed);
      }
      for (String never : AllowlistCommand.neverProposed(a)) {
        assertThat(never).doesNotContain("\n", "\r", "\u202e").hasSizeLessThan(2000);
      }
    }
  }
}
