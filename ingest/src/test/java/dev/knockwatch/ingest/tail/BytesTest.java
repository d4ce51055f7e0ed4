package dev.knockwatch.ingest.tail;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The eight-bytes-at-a-time scans against the plain byte-by-byte answer, at every alignment. */
class BytesTest {

  private static int newlineOneByOne(byte[] b, int from, int to) {
    for (int i = from; i < to; i++) {
      if (b[i] == '\n') {
        return i;
      }
    }
    return to;
  }

  private static boolean binaryOneByOne(String text) {
    int control = 0;
    for (char c : text.toCharArray()) {
      if (c == 0) {
        return true;
      }
      control += c < 0x20 && c != '\t' ? 1 : 0;
    }
    return control * 10 > text.length();
  }

  @Test
  void everyNewlineAndEveryBinaryVerdictMatchesTheByteByByteScan() {
    byte[] alphabet = {'a', 'Z', ' ', '\n', '\t', '\r', 0, 1, 0x1f, 0x20, 0x7f, (byte) 0x80, (byte) 0xc3, (byte) 0xa9,
        (byte) 0xff, 0x0b, 0x09};
    Random random = new Random(3);
    for (int n = 0; n < 100_000; n++) {
      byte[] b = new byte[random.nextInt(40)];
      // mostly text, sometimes a run of one byte value (the SWAR borrow cases)
      int rare = random.nextInt(4);
      for (int i = 0; i < b.length; i++) {
        b[i] = random.nextInt(10) < rare ? alphabet[random.nextInt(alphabet.length)] : (byte) ('a' + random.nextInt(26));
      }
      int from = b.length == 0 ? 0 : random.nextInt(b.length);
      assertThat(Bytes.nextNewline(b, from, b.length)).isEqualTo(newlineOneByOne(b, from, b.length));
      String text = new String(b, from, b.length - from, StandardCharsets.UTF_8);
      assertThat(Bytes.binary(b, from, b.length, text.length())).as(text).isEqualTo(binaryOneByOne(text));
    }
  }

  @Test
  void aLineOfTextIsNotBinaryAndNulAlwaysIs() {
    byte[] line = "{\"line\":\"deny network-outbound example.com:443 (host is not on the allow list)\"}\t"
        .getBytes(StandardCharsets.UTF_8);
    assertThat(Bytes.binary(line, 0, line.length, line.length)).isFalse();
    line[40] = 0;
    assertThat(Bytes.binary(line, 0, line.length, line.length)).isTrue();
  }
}
