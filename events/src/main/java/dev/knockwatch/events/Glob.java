package dev.knockwatch.events;

import java.util.regex.Pattern;

/** A shell-style glob: {@code *} any run of characters, {@code ?} one character, the rest literal. */
public record Glob(String text, Pattern pattern) {

  public static Glob of(String text) {
    StringBuilder re = new StringBuilder();
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      switch (c) {
        case '*' -> re.append(".*");
        case '?' -> re.append('.');
        default -> re.append(Pattern.quote(String.valueOf(c)));
      }
    }
    return new Glob(text, Pattern.compile(re.toString(), Pattern.DOTALL));
  }

  public boolean matches(String s) {
    return pattern.matcher(s).matches();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Glob g && g.text.equals(text);
  }

  @Override
  public int hashCode() {
    return text.hashCode();
  }

  @Override
  public String toString() {
    return text;
  }
}
