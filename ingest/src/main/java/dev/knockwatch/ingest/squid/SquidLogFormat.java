package dev.knockwatch.ingest.squid;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Squid {@code logformat} string compiled to a line pattern: each {@code %code} becomes a
 * named field, literal text stays literal, whitespace matches any run of spaces (Squid pads
 * {@code %6tr}), and a field inside double quotes may hold spaces.
 *
 * <p>Fields: {@code time} ({@code %ts}), {@code millis} ({@code %tu}), {@code localTime}
 * ({@code %tl}), {@code client}, {@code result} ({@code %Ss}), {@code status} ({@code %>Hs}),
 * {@code bytes}, {@code method}, {@code url}, {@code user} ({@code %un}), {@code ident},
 * {@code hierarchy}, {@code server}, {@code mime}, {@code version}, {@code elapsed}, and
 * {@code header:<name>} for {@code %{Name}>h} (name lower case).
 */
public final class SquidLogFormat {

  /** Squid's built-in {@code squid} format. */
  public static final String SQUID = "%ts.%03tu %6tr %>a %Ss/%03>Hs %<st %rm %ru %[un %Sh/%<a %mt";
  /** Squid's built-in {@code combined} format. */
  public static final String COMBINED =
      "%>a %[ui %[un [%tl] \"%rm %ru HTTP/%rv\" %>Hs %<st \"%{Referer}>h\" \"%{User-Agent}>h\" %Ss:%Sh";
  /** The {@code squid} format plus the proxy user and an X-Command-Id header: what knockwatch recommends. */
  public static final String KNOCK = "%ts.%03tu %6tr %>a %Ss/%03>Hs %<st %rm %ru %un %{X-Command-Id}>h %Sh/%<a %mt";

  private static final Pattern CODE = Pattern.compile("%([-0-9]*)(\\{[^}]*\\})?([\\[>'#<]*)([A-Za-z]{1,2})");
  private static final Map<String, String> NAMES = Map.ofEntries(
      Map.entry("ts", "time"), Map.entry("tu", "millis"), Map.entry("tl", "localTime"), Map.entry("tg", "localTime"),
      Map.entry("tr", "elapsed"), Map.entry(">a", "client"), Map.entry("Ss", "result"), Map.entry(">Hs", "status"),
      Map.entry("<st", "bytes"), Map.entry("rm", "method"), Map.entry("ru", "url"), Map.entry("un", "user"),
      Map.entry("ui", "ident"), Map.entry("Sh", "hierarchy"), Map.entry("<a", "server"), Map.entry("mt", "mime"),
      Map.entry("rv", "version"));

  private final String format;
  private final Pattern pattern;
  /** Each field's group in {@link #pattern}; of a field given twice, the last counts. */
  private final Map<String, Integer> groups;

  private SquidLogFormat(String format, Pattern pattern, List<String> fields) {
    this.format = format;
    this.pattern = pattern;
    Map<String, Integer> groups = new HashMap<>();
    for (int g = 0; g < fields.size(); g++) {
      groups.put(fields.get(g), g + 1);
    }
    this.groups = Map.copyOf(groups);
  }

  /** The fields of one line: each read from the match when asked for, none copied before. */
  public final class Fields {
    private final Matcher match;

    private Fields(Matcher match) {
      this.match = match;
    }

    public boolean has(String field) {
      return groups.containsKey(field);
    }

    /** The field's text, or {@code otherwise} when this format has no such field. */
    public String get(String field, String otherwise) {
      Integer g = groups.get(field);
      return g == null ? otherwise : match.group(g);
    }
  }

  /** {@code squid}, {@code combined} and {@code knock} name the built-in formats; anything else is a logformat string. */
  public static SquidLogFormat of(String nameOrFormat) {
    return switch (nameOrFormat) {
      case "squid" -> compile(SQUID);
      case "combined" -> compile(COMBINED);
      case "knock" -> compile(KNOCK);
      default -> compile(nameOrFormat);
    };
  }

  public static SquidLogFormat compile(String format) {
    StringBuilder re = new StringBuilder("^");
    List<String> fields = new ArrayList<>();
    boolean quoted = false;
    int i = 0;
    Matcher m = CODE.matcher(format);
    while (i < format.length()) {
      char c = format.charAt(i);
      if (c == '%' && m.find(i) && m.start() == i) {
        String name = fieldName(m.group(2), m.group(3), m.group(4));
        fields.add(name);
        re.append(quoted ? "([^\"]*)" : valuePattern(name));
        i = m.end();
      } else if (Character.isWhitespace(c)) {
        re.append(quoted ? "\\s" : "\\s+");
        while (i < format.length() && Character.isWhitespace(format.charAt(i))) {
          i++;
        }
      } else {
        if (c == '"') {
          quoted = !quoted;
        }
        re.append(Pattern.quote(String.valueOf(c)));
        i++;
      }
    }
    re.append("\\s*$");
    if (fields.isEmpty()) {
      throw new IllegalArgumentException("logformat \"" + format + "\" has no %codes");
    }
    return new SquidLogFormat(format, Pattern.compile(re.toString()), List.copyOf(fields));
  }

  /** Numbers must be numbers, so a line in another format does not fit by accident. */
  private static String valuePattern(String name) {
    return switch (name) {
      case "time", "millis" -> "(\\d+)";
      case "elapsed" -> "(-?\\d+)";
      case "status" -> "(\\d{3})";
      case "bytes" -> "(\\d+|-)";
      case "localTime" -> "([^\\]]+)";
      case "result", "hierarchy" -> "([A-Za-z_]+)";
      default -> "(\\S+)";
    };
  }

  private static String fieldName(String braces, String modifiers, String code) {
    String key = modifiers.replace("[", "").replace("'", "").replace("#", "") + code;
    if (braces != null && code.equals("h")) {
      return "header:" + braces.substring(1, braces.length() - 1).toLowerCase(Locale.ROOT);
    }
    return NAMES.getOrDefault(key, NAMES.getOrDefault(code, "code:" + key));
  }

  /** The fields of {@code line}, or empty when the line is not in this format. */
  public Optional<Fields> read(String line) {
    Matcher m = pattern.matcher(line);
    return m.matches() ? Optional.of(new Fields(m)) : Optional.empty();
  }

  public String format() {
    return format;
  }
}
