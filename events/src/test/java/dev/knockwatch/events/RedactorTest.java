package dev.knockwatch.events;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class RedactorTest {

  @Test
  void aTokenInAQueryStringIsMasked() {
    assertThat(Redactor.redact("curl -s http://example.com/path?token=SECRET#frag"))
        .isEqualTo("curl -s http://example.com/path?token=[REDACTED]#frag");
  }

  @Test
  void otherQueryParametersStay() {
    assertThat(Redactor.redact("https://h.test/a?page=2&api_key=abc123&sort=asc"))
        .isEqualTo("https://h.test/a?page=2&api_key=[REDACTED]&sort=asc");
  }

  @Test
  void srtsProxyPasswordInTheProxyUrlIsMasked() {
    // from the srt 0.0.83 capture (h3-api-violations-refuseOpaqueTunnels.json)
    String line = "* Uses proxy env variable https_proxy == 'http://srt.Ynp3MFptZFFGbG1NWURsaFJXTzlMZw%3D%3D:"
        + "fd45dcde335d0dad5602ad41014210dd@localhost:3128'";
    assertThat(Redactor.redact(line))
        .isEqualTo("* Uses proxy env variable https_proxy == 'http://srt.Ynp3MFptZFFGbG1NWURsaFJXTzlMZw%3D%3D:"
            + "[REDACTED]@localhost:3128'")
        .doesNotContain("fd45dcde335d0dad5602ad41014210dd");
  }

  @Test
  void authorizationHeadersKeepTheirSchemeAndLoseTheirCredentials() {
    assertThat(Redactor.redact("> Proxy-Authorization: Basic c3J0LllucDNNRnB0WkZGR2JHMU5XVVJzYUZKWFR6bE1adz09OmZkNDVk\r"))
        .isEqualTo("> Proxy-Authorization: Basic [REDACTED]\r");
    assertThat(Redactor.redact("curl -H 'Authorization: Bearer abc.def.ghi' https://api.test"))
        .isEqualTo("curl -H 'Authorization: Bearer [REDACTED]' https://api.test");
  }

  @Test
  void curlUserPasswordIsMasked() {
    assertThat(Redactor.redact("curl -u admin:hunter2 https://h.test"))
        .isEqualTo("curl -u admin:[REDACTED] https://h.test");
  }

  @Test
  void secretFlagsAndEnvironmentAssignmentsAreMasked() {
    assertThat(Redactor.redact("mysql --password=s3cr3t -h db"))
        .isEqualTo("mysql --password=[REDACTED] -h db");
    assertThat(Redactor.redact("GITHUB_TOKEN=abc123 gh repo list"))
        .isEqualTo("GITHUB_TOKEN=[REDACTED] gh repo list");
  }

  @Test
  void wellKnownTokenShapesAreMaskedWherever_theyStand() {
    assertThat(Redactor.redact("echo ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa | gh auth login --with-token"))
        .isEqualTo("echo [REDACTED] | gh auth login --with-token");
    assertThat(Redactor.redact("aws s3 ls # AKIAABCDEFGHIJKLMNOP")).isEqualTo("aws s3 ls # [REDACTED]");
  }

  @Test
  void textWithoutSecretsIsUnchanged() {
    String plain = "curl -s https://example.com/index.html?page=1";
    assertThat(Redactor.redact(plain)).isSameAs(plain);
  }

  @Test
  void theHintsNeverSkipAMatch() {
    // redact() runs a rule only from its first hint on; the same rules run everywhere must agree
    List<String> parts = List.of("curl", " ", "-", "--", "?", "&", ";", "=", "'", "\"", ":", "@", "/", "x", "Y",
        "token", "TOKEN", "Api_Key", "password", "pass", "sig", "x-amz-signature", "session", "p", "u", "user",
        "proxy-", "Proxy-Authorization", "authorization: Bearer ", "https://", "srt.abc%3D", "GITHUB_", "SECRET",
        "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "AKIAABCDEFGHIJKLMNOP", "xoxb-1234567890-abc", "sk-ant-",
        "eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.SflKxwRJSMeKKF2Q", "é", "\t",
        "to\u212Aen", "\u017Fecret", "K", "S"); // Kelvin sign, long s: (?i) folds ASCII only
    Random random = new Random(42);
    for (int n = 0; n < 20_000; n++) {
      StringBuilder text = new StringBuilder();
      for (int k = random.nextInt(12); k >= 0; k--) {
        text.append(parts.get(random.nextInt(parts.size())));
      }
      String t = text.toString();
      assertThat(Redactor.redact(t)).as(t).isEqualTo(Redactor.redactEverywhere(t));
    }
  }

  /**
   * An agent writes the command text: no text of it may make redaction take long. Each piece
   * repeated to 256 K characters (with the hints that wake the rules up): a quadratic rule took
   * 1.5 s for 16 K characters, so minutes here; the linear ones take well under a second each. The
   * timeout guards against a hang; it is no speed figure.
   */
  @Test
  @org.junit.jupiter.api.Timeout(value = 120, threadMode = org.junit.jupiter.api.Timeout.ThreadMode.SEPARATE_THREAD)
  void noTextAnAgentWritesMakesRedactionQuadratic() {
    for (String piece : new String[] {"x", "a.", "A", "TOKEN", "AKIA", "eyJ", "a://", "-", "--password ", "-u ",
        "Authorization: ", "?token=", "ghp_", "xox", "sk-", "_", "'", "\"", " ", "-----BEGIN", "cookie: ", "password=",
        "\"password\": \"", "hooks.slack.com/services/", "SG.", "npm_", "hf_", "sk_live_", "AIza", "pypi-"}) {
      String text = piece.repeat(256 * 1024 / piece.length()) + " @ :x TOKEN= ?token= --password -u a://b:c@d";
      assertThat(Redactor.redact(text)).isNotNull();
      assertThat(Redactor.redactEverywhere(text)).isNotNull();
    }
  }

  /** The corpus: one sample per rule (each rule's source in docs/FORMATS.md), and near-misses that must stay. */
  @Test
  void everyRuleMasksItsSampleAndNoNearMissIsTouched() throws java.io.IOException {
    java.util.List<String> rows;
    try (java.io.InputStream in = RedactorTest.class.getResourceAsStream("/redaction-corpus.tsv")) {
      rows = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).lines()
          .filter(l -> !l.startsWith("#") && !l.isBlank()).toList();
    }
    assertThat(rows).hasSizeGreaterThan(40);
    for (String row : rows) {
      String[] c = row.split("\t");
      assertThat(Redactor.redact(c[1])).as(c[0] + ": " + c[1]).isEqualTo(c[2]);
      assertThat(Redactor.redactEverywhere(c[1])).as(c[0] + " (every rule everywhere): " + c[1]).isEqualTo(c[2]);
    }
  }
}
