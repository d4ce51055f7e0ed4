package dev.knockwatch.ingest.formats.squid;

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
 *
 * <p>A line is first read by {@link Shape}, a left-to-right scan that takes what the pattern's
 * first try takes (every repetition as long as it goes); only when that scan fails does the
 * pattern itself run, with its backtracking. Where the scan succeeds the pattern would find
 * the same fields, so both give one answer, and the common line costs no regex.
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
  private final Shape shape;
  /** Each field's group in {@link #pattern}; of a field given twice, the last counts. */
  private final Map<String, Integer> groups;

  private SquidLogFormat(String format, Pattern pattern, Shape shape, List<String> fields) {
    this.format = format;
    this.pattern = pattern;
    this.shape = shape;
    Map<String, Integer> groups = new HashMap<>();
    for (int g = 0; g < fields.size(); g++) {
      groups.put(fields.get(g), g + 1);
    }
    this.groups = Map.copyOf(groups);
  }

  /**
   * The fields of one line: where each starts and ends ({@code bounds[2g-2]} and
   * {@code bounds[2g-1]} for group g), none copied before it is asked for.
   */
  public final class Fields {
    private final String line;
    private final int[] bounds;

    private Fields(String line, int[] bounds) {
      this.line = line;
      this.bounds = bounds;
    }

    public boolean has(String field) {
      return groups.containsKey(field);
    }

    /** The field's text, or {@code otherwise} when this format has no such field. */
    public String get(String field, String otherwise) {
      Integer g = groups.get(field);
      return g == null ? otherwise : line.substring(bounds[2 * g - 2], bounds[2 * g - 1]);
    }
  }

  /**
   * The pattern's steps, in order, for a scan without backtracking: a field of one character
   * class, a literal character, a run of whitespace ({@code \s+}), one whitespace character
   * (inside quotes), and the end ({@code \s*$}).
   */
  private static final class Shape {
    static final int DIGITS = 0; // \d+
    static final int SIGNED = 1; // -?\d+
    static final int STATUS = 2; // \d{3}
    static final int BYTES = 3; // \d+|-
    static final int TO_BRACKET = 4; // [^\]]+
    static final int WORD = 5; // [A-Za-z_]+
    static final int NON_SPACE = 6; // \S+
    static final int QUOTED = 7; // [^"]*
    static final int LITERAL = 8;
    static final int SPACES = 9;
    static final int ONE_SPACE = 10;
    static final int END = 11;
    /** Each field class's group in the pattern. */
    static final String[] PATTERNS = {"(\\d+)", "(-?\\d+)", "(\\d{3})", "(\\d+|-)", "([^\\]]+)", "([A-Za-z_]+)",
        "(\\S+)", "([^\"]*)"};

    /** Each step's kind, and for a literal its character. */
    private final int[] kinds;
    private final char[] literals;
    private final int fields;

    Shape(List<int[]> steps) {
      kinds = new int[steps.size()];
      literals = new char[steps.size()];
      int f = 0;
      for (int k = 0; k < kinds.length; k++) {
        kinds[k] = steps.get(k)[0];
        literals[k] = (char) steps.get(k)[1];
        f += kinds[k] < LITERAL ? 1 : 0;
      }
      fields = f;
    }

    /** Each field's bounds, as the pattern's first try would take them; null when that try fails. */
    int[] scan(String line) {
      int[] bounds = new int[2 * fields];
      int n = line.length();
      int i = 0;
      int g = 0;
      for (int k = 0; k < kinds.length; k++) {
        int kind = kinds[k];
        if (kind < LITERAL) {
          int end = field(kind, line, i, n);
          if (end < 0) {
            return null;
          }
          bounds[g++] = i;
          bounds[g++] = end;
          i = end;
        } else if (kind == LITERAL) {
          if (i >= n || line.charAt(i) != literals[k]) {
            return null;
          }
          i++;
        } else if (kind == SPACES || kind == ONE_SPACE) {
          if (i >= n || !space(line.charAt(i))) {
            return null;
          }
          i++;
          while (kind == SPACES && i < n && space(line.charAt(i))) {
            i++;
          }
        } else { // END
          while (i < n && space(line.charAt(i))) {
            i++;
          }
          return i == n ? bounds : null;
        }
      }
      return null;
    }

    /** Where a field of {@code kind} that starts at {@code i} ends, taking as much as it can; -1 when it cannot start there. */
    private static int field(int kind, String line, int i, int n) {
      int start = i;
      switch (kind) {
        case SIGNED -> {
          if (i < n && line.charAt(i) == '-') {
            start = ++i;
          }
          while (i < n && digit(line.charAt(i))) {
            i++;
          }
        }
        case STATUS -> {
          for (int end = i + 3; i < end; i++) {
            if (i >= n || !digit(line.charAt(i))) {
              return -1;
            }
          }
        }
        case BYTES -> {
          while (i < n && digit(line.charAt(i))) {
            i++;
          }
          if (i == start && i < n && line.charAt(i) == '-') {
            i++;
          }
        }
        case QUOTED -> {
          while (i < n && line.charAt(i) != '"') {
            i++;
          }
          return i;
        }
        default -> {
          while (i < n && in(kind, line.charAt(i))) {
            i++;
          }
        }
      }
      return i > start ? i : -1;
    }

    private static boolean in(int kind, char c) {
      return switch (kind) {
        case DIGITS -> digit(c);
        case TO_BRACKET -> c != ']';
        case WORD -> c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_';
        default -> !space(c); // NON_SPACE
      };
    }

    private static boolean digit(char c) {
      return c >= '0' && c <= '9';
    }

    /** {@code \s}: space, tab, newline, vertical tab, form feed, carriage return. */
    private static boolean space(char c) {
      return c == ' ' || c >= '\t' && c <= '\r';
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
    List<int[]> steps = new ArrayList<>();
    List<String> fields = new ArrayList<>();
    boolean quoted = false;
    int i = 0;
    Matcher m = CODE.matcher(format);
    while (i < format.length()) {
      char c = format.charAt(i);
      if (c == '%' && m.find(i) && m.start() == i) {
        String name = fieldName(m.group(2), m.group(3), m.group(4));
        fields.add(name);
        int fieldClass = quoted ? Shape.QUOTED : valueClass(name);
        re.append(Shape.PATTERNS[fieldClass]);
        steps.add(new int[] {fieldClass, 0});
        i = m.end();
      } else if (Character.isWhitespace(c)) {
        re.append(quoted ? "\\s" : "\\s+");
        steps.add(new int[] {quoted ? Shape.ONE_SPACE : Shape.SPACES, 0});
        while (i < format.length() && Character.isWhitespace(format.charAt(i))) {
          i++;
        }
      } else {
        if (c == '"') {
          quoted = !quoted;
        }
        re.append(Pattern.quote(String.valueOf(c)));
        steps.add(new int[] {Shape.LITERAL, c});
        i++;
      }
    }
    re.append("\\s*$");
    steps.add(new int[] {Shape.END, 0});
    if (fields.isEmpty()) {
      throw new IllegalArgumentException("logformat \"" + format + "\" has no %codes");
    }
    return new SquidLogFormat(format, Pattern.compile(re.toString(), Pattern.UNIX_LINES), new Shape(steps), List.copyOf(fields));
  }

  /** A field's character class: numbers must be numbers, so a line in another format does not fit by accident. */
  private static int valueClass(String name) {
    return switch (name) {
      case "time", "millis" -> Shape.DIGITS;
      case "elapsed" -> Shape.SIGNED;
      case "status" -> Shape.STATUS;
      case "bytes" -> Shape.BYTES;
      case "localTime" -> Shape.TO_BRACKET;
      case "result", "hierarchy" -> Shape.WORD;
      default -> Shape.NON_SPACE;
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
    int[] bounds = shape.scan(line);
    return bounds != null ? Optional.of(new Fields(line, bounds)) : readByPattern(line);
  }

  /** {@link #read}, by the pattern alone. */
  Optional<Fields> readByPattern(String line) {
    Matcher m = pattern.matcher(line);
    if (!m.matches()) {
      return Optional.empty();
    }
    int[] bounds = new int[2 * m.groupCount()];
    for (int g = 1; g <= m.groupCount(); g++) {
      bounds[2 * g - 2] = m.start(g);
      bounds[2 * g - 1] = m.end(g);
    }
    return Optional.of(new Fields(line, bounds));
  }

  /** Whether the scan reads {@code line}, without the pattern: for tests. */
  boolean readsWithoutPattern(String line) {
    return shape.scan(line) != null;
  }

  /** Every field's text, in the order of the format: for tests. */
  List<String> values(Fields f) {
    List<String> out = new ArrayList<>();
    for (int k = 0; k < f.bounds.length; k += 2) {
      out.add(f.line.substring(f.bounds[k], f.bounds[k + 1]));
    }
    return out;
  }

  public String format() {
    return format;
  }
}
