package dev.knockwatch.ingest.formats.toolcall;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class CommandTextTest {

  @Test
  void commandTextNamesEveryFormOfAnIpLiteralAndTheDoorsAroundTheProxy() {
    assertThat(CommandText.scan("curl -s http://0xa9fea9fe/latest/ && curl http://2852039166/ ; nc 127.1:22; "
        + "curl http://[::1]:8080/x; curl https://bit.ly/abc; dig metadata.google.internal"))
        .extracting(t -> t.host() + "|" + t.action())
        .containsExactly("169.254.169.254|http-request", "::1|http-request", "bit.ly|http-request",
            "127.0.0.1|http-request", "metadata.google.internal|http-request");
    assertThat(CommandText.scan("ALL_PROXY=socks5h://127.0.0.1:1080 curl https://pastebin.com/x"))
        .extracting(t -> t.host() + "|" + t.action())
        .as("the SOCKS proxy itself is no target").containsExactly("pastebin.com|socks-tunnel");
    assertThat(CommandText.scan("curl https://example.com/ && git push origin main")).isEmpty();
  }
}
