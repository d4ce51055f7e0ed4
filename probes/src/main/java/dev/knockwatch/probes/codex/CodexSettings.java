package dev.knockwatch.probes.codex;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The {@code config.toml} block that makes the Codex CLI report to knockwatch as one agent: its
 * OpenTelemetry exporter ({@code [otel]}, codex-rs's {@code config} docs: {@code exporter = {
 * otlp-http = { endpoint, protocol, headers } }}) pointed at knockwatch's OTLP endpoint with a bearer
 * token of that agent's, kept under knockwatch's {@code var/otlp/tokens/<agentId>.token} (mode 600,
 * made once). The check that the places Codex's sandbox may write hold neither the token nor the
 * rollouts knockwatch reads: what the agent can write, it can forge (docs/TRUST.md).
 */
public final class CodexSettings {

  private CodexSettings() {}

  /** The {@code [otel]} block: Codex's log events to {@code endpoint}, as binary OTLP, with the agent's token. */
  public static String otel(String endpoint, String token, String agent) {
    return String.join("\n",
        "# knockwatch: Codex's sandbox refusals, escalations and network-proxy decisions, as agent " + agent,
        "# (merge into ~/.codex/config.toml, or an administrator's /etc/codex/config.toml; a file with an [otel] table",
        "# already takes these keys into it)",
        "[otel]",
        "log_user_prompt = false",
        "exporter = { otlp-http = { endpoint = \"" + endpoint + "\", protocol = \"binary\", headers = {"
            + " \"authorization\" = \"Bearer " + token + "\" } } }",
        "");
  }

  /**
   * Why Codex's sandbox could write {@code path} (its token, the rollouts knockwatch reads), if it
   * could: inside {@code /tmp} or {@code $TMPDIR}, which workspace-write lets commands write, or a
   * {@code writable_roots} of the config. (The directory Codex is started in is its workspace too:
   * keep knockwatch's {@code var/} out of the projects Codex works on.)
   */
  public static Optional<String> reachable(Path path, String what, String tmpdir, List<String> writableRoots) {
    Path p = realOfNearest(path.toAbsolutePath().normalize());
    List<String[]> writable = new ArrayList<>();
    writable.add(new String[] {"/tmp", "/tmp, which workspace-write lets commands write"});
    if (tmpdir != null && tmpdir.startsWith("/")) {
      writable.add(new String[] {tmpdir, "$TMPDIR, which workspace-write lets commands write"});
    }
    for (String w : writableRoots) {
      writable.add(new String[] {w, "a writable_roots of the config"});
    }
    for (String[] w : writable) {
      Path root = realOfNearest(Path.of(w[0]).toAbsolutePath().normalize());
      if (p.startsWith(root)) {
        return Optional.of(what + " " + path + " is inside " + w[0] + " (" + w[1] + "): Codex's sandbox could write"
            + " it; choose a directory it cannot");
      }
    }
    return Optional.empty();
  }

  /** The {@code writable_roots = [...]} of a config.toml, as far as a line holds them (empty when none or unreadable). */
  public static List<String> writableRoots(Path config) {
    List<String> out = new ArrayList<>();
    try {
      for (String line : Files.readAllLines(config, StandardCharsets.UTF_8)) {
        String l = line.strip();
        if (l.startsWith("writable_roots") && l.contains("[")) {
          for (String part : l.substring(l.indexOf('[') + 1, l.lastIndexOf(']') < 0 ? l.length() : l.lastIndexOf(']'))
              .split(",")) {
            String v = part.strip().replaceAll("^[\"']|[\"']$", "");
            if (v.startsWith("/")) {
              out.add(v);
            }
          }
        }
      }
    } catch (IOException | RuntimeException e) {
      return out;
    }
    return out;
  }

  /** The path with its longest existing prefix resolved (symbolic links followed). */
  static Path realOfNearest(Path p) {
    Path existing = p;
    while (existing != null && !Files.exists(existing)) {
      existing = existing.getParent();
    }
    if (existing == null) {
      return p;
    }
    try {
      return existing.toRealPath().resolve(existing.relativize(p)).normalize();
    } catch (IOException e) {
      return p;
    }
  }
}
