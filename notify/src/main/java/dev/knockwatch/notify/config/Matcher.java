package dev.knockwatch.notify.config;

import dev.knockwatch.events.Alert;
import dev.knockwatch.notify.spi.AlertLabels;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * One matcher of a route or an inhibit rule, in Alertmanager's syntax: {@code name="value"},
 * {@code name!="value"}, {@code name=~"regex"} or {@code name!~"regex"} (the value may be left
 * unquoted; a regex must match the whole value). The names are an alert's {@link AlertLabels}: rule
 * (also {@code alertname}), severity, agent, role, command, and the rule's own labels; a label the
 * alert lacks has the empty value, as in Alertmanager.
 */
public record Matcher(String name, Op op, String value, Pattern regex) {

  /** The four operators, by their text. */
  public enum Op {
    EQUAL("="), NOT_EQUAL("!="), REGEX("=~"), NOT_REGEX("!~");

    final String text;

    Op(String text) {
      this.text = text;
    }
  }

  private static final Pattern SYNTAX = Pattern.compile("\\s*([A-Za-z_][A-Za-z0-9_]*)\\s*(=~|!~|!=|=)\\s*(.*?)\\s*");

  /** A matcher from its text; an {@link IllegalArgumentException} saying what is wrong otherwise. */
  public static Matcher parse(String text) {
    java.util.regex.Matcher m = SYNTAX.matcher(text);
    if (!m.matches()) {
      throw new IllegalArgumentException("\"" + text + "\" is not a matcher (like severity=\"page\", rule!=\"x\","
          + " agent=~\"ci-.*\")");
    }
    Op op = switch (m.group(2)) {
      case "=" -> Op.EQUAL;
      case "!=" -> Op.NOT_EQUAL;
      case "=~" -> Op.REGEX;
      default -> Op.NOT_REGEX;
    };
    return of(m.group(1), op, unquote(m.group(3)));
  }

  public static Matcher of(String name, Op op, String value) {
    Pattern regex = null;
    if (op == Op.REGEX || op == Op.NOT_REGEX) {
      try {
        regex = Pattern.compile(value, Pattern.DOTALL);
      } catch (PatternSyntaxException e) {
        throw new IllegalArgumentException(name + op.text + ": \"" + value + "\" is not a regular expression ("
            + e.getDescription() + ")");
      }
    }
    return new Matcher(name, op, value, regex);
  }

  public boolean matches(Alert a) {
    String v = AlertLabels.of(a).getOrDefault("rule".equals(name) ? "alertname" : name, "");
    return switch (op) {
      case EQUAL -> v.equals(value);
      case NOT_EQUAL -> !v.equals(value);
      case REGEX -> regex.matcher(v).matches();
      case NOT_REGEX -> !regex.matcher(v).matches();
    };
  }

  /** {@code "a\"b"} is {@code a"b}; an unquoted value is itself. */
  private static String unquote(String v) {
    if (v.length() < 2 || v.charAt(0) != '"' || v.charAt(v.length() - 1) != '"') {
      return v;
    }
    StringBuilder out = new StringBuilder();
    for (int i = 1; i < v.length() - 1; i++) {
      char c = v.charAt(i);
      if (c == '\\' && i + 1 < v.length() - 1) {
        char n = v.charAt(++i);
        out.append(n == 'n' ? '\n' : n);
      } else {
        out.append(c);
      }
    }
    return out.toString();
  }

  /** As written in receivers.yaml: {@code severity=~"page|critical"}. */
  @Override
  public String toString() {
    return name + op.text + '"' + value.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
  }
}
