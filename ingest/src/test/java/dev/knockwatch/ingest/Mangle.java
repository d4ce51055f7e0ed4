package dev.knockwatch.ingest;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/** Near-valid input for tests that hold a fast reader against a reference one. */
public final class Mangle {

  private Mangle() {}

  /** {@code count} texts, each one of {@code from} (picked at random) with {@link #edits}; the same for the same seed. */
  public static List<String> texts(List<String> from, String alphabet, int count, long seed) {
    Random random = new Random(seed);
    List<String> out = new ArrayList<>(count);
    for (int n = 0; n < count; n++) {
      out.add(edits(from.get(random.nextInt(from.size())), alphabet, random));
    }
    return out;
  }

  /** {@code text} with one to three characters of {@code alphabet} inserted, deleted or put in place of another. */
  public static String edits(String text, String alphabet, Random random) {
    StringBuilder out = new StringBuilder(text);
    for (int k = random.nextInt(3); k >= 0; k--) {
      if (out.isEmpty()) {
        out.append(alphabet.charAt(random.nextInt(alphabet.length())));
        continue;
      }
      int at = random.nextInt(out.length());
      char c = alphabet.charAt(random.nextInt(alphabet.length()));
      switch (random.nextInt(3)) {
        case 0 -> out.insert(at, c);
        case 1 -> out.deleteCharAt(at);
        default -> out.setCharAt(at, c);
      }
    }
    return out.toString();
  }
}
