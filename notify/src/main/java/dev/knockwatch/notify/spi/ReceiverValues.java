package dev.knockwatch.notify.spi;

import dev.knockwatch.events.config.Key;
import dev.knockwatch.events.config.KeyValues;
import dev.knockwatch.events.config.YamlNode;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The values of one receiver's keys ({@link KeyValues}) as receivers.yaml means them: a string
 * may use {@code ${VAR}} and {@code ${VAR:-default}} from the environment, and a secret is given
 * inline or read from the file its {@code *File} key names. Every problem stands at its key's line
 * and names the key, the variable or the file, never a value.
 */
public final class ReceiverValues {

  private static final Pattern VAR = Pattern.compile("\\$\\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?}");

  private final KeyValues values;
  private final YamlNode holder;
  private final Map<String, String> env;
  private final int problemsBefore;

  /**
   * {@code values} of the receiver's mapping {@code holder}; {@code problemsBefore}: how many
   * problems its file had before they were read.
   */
  public ReceiverValues(KeyValues values, YamlNode holder, Map<String, String> env, int problemsBefore) {
    this.values = values;
    this.holder = holder;
    this.env = env;
    this.problemsBefore = problemsBefore;
  }

  /** Every key at its default: a receiver made without a file (the console of {@code up} without receivers.yaml). */
  public static ReceiverValues defaults(List<Key<?>> keys) {
    return new ReceiverValues(KeyValues.defaults(keys), null, Map.of(), 0);
  }

  /** A key whose value is a string that may use {@code ${VAR}}: read as written, expanded by {@link #string}. */
  public static Key<String> text(String name, String type, String fallback, String doc) {
    return Key.of(name, type, fallback, fallback == null ? "none" : fallback, doc,
        (node, where) -> node.string(where + ": " + name));
  }

  /** A secret's key ({@link #secret}): never printed, never in a problem. */
  public static Key<String> secretKey(String name, String doc) {
    return text(name, "secret, or ${VAR}", null, doc);
  }

  /** The {@code *File} form of {@code secret}: the path of a file that holds only the secret. */
  public static Key<String> fileOf(Key<String> secret) {
    return text(secret.name() + "File", "path", null, "a file holding only " + secret.name() + ", read at start");
  }

  /** The value of a key that is not a string (a duration, a number): as read, else its default. */
  public <T> T get(Key<T> k) {
    return values.get(k);
  }

  public boolean given(Key<?> k) {
    return values.given(k);
  }

  /** Whether any problem was found since these values began to be read. */
  public boolean hasProblems() {
    return holder != null && holder.file().problemCount() > problemsBefore;
  }

  /** A problem at {@code k}'s line (the receiver's when absent): {@code FILE:LINE: receiver NAME: message}. */
  public void problem(Key<?> k, String message) {
    values.problem(k, message);
  }

  /** A problem of the receiver as a whole, at its line. */
  public void problem(String message) {
    holder.problem(values.where() + ": " + message);
  }

  /** {@code k}'s string, expanded; its default when absent; null after a problem. */
  public String string(Key<String> k) {
    YamlNode v = values.node(k);
    if (v == null) {
      return k.fallback();
    }
    return v.isScalar() ? expanded(v, values.where() + ": " + k.name(), env) : null;
  }

  /** {@code k}'s http(s) URL, expanded; its default when absent; null after a problem. */
  public URI url(Key<String> k) {
    String text = string(k);
    if (text == null) {
      return null;
    }
    try {
      URI u = new URI(text);
      if (!"http".equals(u.getScheme()) && !"https".equals(u.getScheme()) || u.getHost() == null) {
        problem(k, k.name() + ": not an http(s) URL");
        return null;
      }
      return u;
    } catch (URISyntaxException e) {
      problem(k, k.name() + ": not a URL");
      return null;
    }
  }

  /** {@code inline} or {@code file} ({@link #fileOf}), expanded; null when neither is given. */
  public Secret secret(Key<String> inline, Key<String> file) {
    if (given(inline) && given(file)) {
      problem(file, "give " + inline.name() + " or " + file.name() + ", not both");
      return null;
    }
    if (given(file)) {
      String path = string(file);
      if (path == null) {
        return null;
      }
      try {
        String value = Files.readString(Path.of(path), StandardCharsets.UTF_8).strip();
        if (value.isEmpty()) {
          problem(file, file.name() + " " + path + " is empty");
          return null;
        }
        return new Secret(value);
      } catch (IOException e) {
        problem(file, file.name() + " " + path + " cannot be read (" + e.getClass().getSimpleName() + ")");
        return null;
      }
    }
    String value = given(inline) ? string(inline) : null;
    return value == null ? null : new Secret(value);
  }

  /**
   * The string at {@code v} with {@code ${VAR}} and {@code ${VAR:-default}} expanded from
   * {@code env}; null after a problem ({@code what: expected a string}, {@code what: ${VAR} is not
   * set}, {@code what is empty}).
   */
  public static String expanded(YamlNode v, String what, Map<String, String> env) {
    String text = v.string(what);
    if (text == null) {
      return null;
    }
    Matcher m = VAR.matcher(text);
    StringBuilder out = new StringBuilder();
    boolean ok = true;
    while (m.find()) {
      String value = env.get(m.group(1));
      if (value == null || value.isEmpty()) {
        value = m.group(2);
      }
      if (value == null) {
        v.problem(what + ": ${" + m.group(1) + "} is not set");
        ok = false;
        value = "";
      }
      m.appendReplacement(out, Matcher.quoteReplacement(value));
    }
    m.appendTail(out);
    if (!ok) {
      return null;
    }
    if (out.isEmpty()) {
      v.problem(what + " is empty");
      return null;
    }
    return out.toString();
  }
}
