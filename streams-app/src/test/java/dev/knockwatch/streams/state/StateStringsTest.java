package dev.knockwatch.streams.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

public class StateStringsTest {

  /** Agent-written text at its worst: lone surrogates, NUL, bidi overrides, controls, forged hex ids, huge fields. */
  public static String hostile(Random r) {
    String[] pieces = {"example.com:443", "\ud800", "\udfff", "\u0000", "\u202e", "\u2066", "\u001b[31m", "😀", "é",
        "0123456789abcdef0123456789abcdef", "0123456789ABCDEF0123456789ABCDEF", "0123456789abcdef0123456789abcde",
        "\u0003", "", "ci-runner-7", "\\", "\""};
    if (r.nextInt(50) == 0) {
      return "x".repeat(StateStrings.MAX_CHARS - 5 + r.nextInt(10)) + pieces[r.nextInt(pieces.length)];
    }
    if (r.nextInt(5) == 0) {
      char[] c = new char[r.nextInt(40)];
      for (int i = 0; i < c.length; i++) {
        c[i] = (char) r.nextInt(0x10000);
      }
      return new String(c);
    }
    if (r.nextInt(4) == 0) {
      char[] c = new char[32];
      for (int i = 0; i < 32; i++) {
        c[i] = "0123456789abcdef".charAt(r.nextInt(16));
      }
      return new String(c);
    }
    StringBuilder sb = new StringBuilder();
    for (int i = r.nextInt(4); i >= 0; i--) {
      sb.append(pieces[r.nextInt(pieces.length)]);
    }
    return sb.toString();
  }

  private static byte[] write(List<String> list) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    StateStrings strings = new StateStrings();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      for (String s : list) {
        strings.write(out, s);
      }
    }
    return bytes.toByteArray();
  }

  private static List<String> read(byte[] bytes, int n) throws IOException {
    DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes));
    StateStrings strings = new StateStrings();
    List<String> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(strings.read(in));
    }
    assertThat(in.available()).isZero();
    return out;
  }

  @Test
  void everyStringReadsBackAsWrittenInItsOrderHostileOnesIncluded() throws IOException {
    Random r = new Random(11);
    for (int n = 0; n < 5_000; n++) {
      List<String> list = new ArrayList<>();
      for (int i = r.nextInt(n % 10 == 0 ? 200 : 30); i > 0; i--) { // some past the table's 64
        // some strings again, some null
        list.add(r.nextInt(6) == 0 ? null : !list.isEmpty() && r.nextInt(3) == 0 ? list.get(r.nextInt(list.size()))
            : hostile(r));
      }
      List<String> expected = list.stream()
          .map(s -> s != null && s.length() > StateStrings.MAX_CHARS ? s.substring(0, StateStrings.MAX_CHARS) : s).toList();
      assertThat(read(write(list), list.size())).isEqualTo(expected);
    }
  }

  @Test
  void aStringAgainIsItsIndexAndAnEventIdIsSixteenBytes() throws IOException {
    String host = "registry.npmjs.org:443";
    int once = write(List.of(host)).length;
    assertThat(write(List.of(host, host, host)).length).isEqualTo(once + 2 * 2);
    assertThat(write(List.of("9f12633ad59a1e0d0000000000e90000")).length).isEqualTo(1 + 16);
    // not lowercase hex: kept as text, exactly
    assertThat(read(write(List.of("9F12633AD59A1E0D0000000000E90000")), 1)).containsExactly("9F12633AD59A1E0D0000000000E90000");
  }

  @Test
  void theFirstVersionsStringsAPresentFlagThenModifiedUtf8StillRead() throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeBoolean(true);
      out.writeUTF("ci-runner-7");
      out.writeBoolean(false);
      out.writeBoolean(true);
      out.writeUTF("ci-runner-7");
      out.writeBoolean(true);
      out.writeUTF("\ud800\u0000");
    }
    assertThat(read(bytes.toByteArray(), 4)).containsExactly("ci-runner-7", null, "ci-runner-7", "\ud800\u0000");
  }

  @Test
  void aDamagedReferenceOrTagIsAClearError() {
    assertThatThrownBy(() -> read(new byte[] {3, 5}, 1)).isInstanceOf(IOException.class)
        .hasMessage("a reference to string 5 of 0");
    assertThatThrownBy(() -> read(new byte[] {9}, 1)).isInstanceOf(IOException.class)
        .hasMessage("no string starts with tag 9");
    assertThatThrownBy(() -> read(new byte[] {2, 1, 2}, 1)).isInstanceOf(IOException.class);
  }
}
