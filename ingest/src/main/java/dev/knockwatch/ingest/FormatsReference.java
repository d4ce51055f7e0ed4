package dev.knockwatch.ingest;

import dev.knockwatch.events.config.Key;
import dev.knockwatch.ingest.spi.SourceFormat;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The tables of docs/FORMATS.md and docs/TRUST.md that describe the formats, made from
 * what each format declares ({@link SourceFormat}), each between two marker lines of its document.
 * {@code ./knockwatch formats} prints the first; {@code FormatsReferenceTest} fails when a document
 * differs from them (and writes them with {@code -Dknockwatch.docs.write=true}).
 */
public final class FormatsReference {

  /** A table and the document it stands in. */
  public record Section(String document, String name, String markdown) {

    public String begin() {
      return "<!-- " + name + ": made from the formats' declarations (./knockwatch formats); do not edit -->";
    }

    public String end() {
      return "<!-- end of " + name + " -->";
    }
  }

  private FormatsReference() {}

  /** Every section, by document. */
  public static List<Section> sections() {
    return List.of(
        new Section("docs/FORMATS.md", "formats table", formats()),
        new Section("docs/FORMATS.md", "skip reasons", skips()),
        new Section("docs/FORMATS.md", "what each format yields", yields()),
        new Section("docs/FORMATS.md", "format keys", keys()),
        new Section("docs/TRUST.md", "who writes each format", trust()));
  }

  /** docs/FORMATS.md's "Formats read": each format, how its files are chosen, whose lines they hold, what it reads. */
  public static String formats() {
    StringBuilder b = new StringBuilder("| type | chosen by | a file holds | what |\n|---|---|---|---|\n");
    for (SourceFormat f : Formats.all()) {
      SourceFormat.Choice c = f.choice();
      List<String> by = new ArrayList<>();
      c.suffixes().forEach(s -> by.add("`" + s + "`"));
      if (c.firstLineDoc() != null) {
        by.add("first line: " + c.firstLineDoc());
      }
      if (by.isEmpty()) {
        by.add("its source's `type` only");
      }
      if (f.telemetry() != null) {
        by.add("OpenTelemetry: " + f.telemetry().readsDoc() + " (the OTLP endpoint, `otlp` files)");
      }
      b.append("| `").append(f.wireName()).append("` | ").append(cell(String.join("; ", by))).append(" | ")
          .append(f.perCommand() ? "one command's (or session's) lines" : "a shared log's").append(" | ")
          .append(cell(f.summary())).append(" |\n");
    }
    return b.toString();
  }

  /** Why a line is skipped, by format: docs/FORMATS.md's table. */
  public static String skips() {
    StringBuilder b = new StringBuilder("| reason | formats | what the line is |\n|---|---|---|\n");
    b.append("| `blank` | every format | nothing but white space (except where a format reads it: a raw response's end of"
        + " headers) |\n");
    Map<String, List<String>> formatsOf = new LinkedHashMap<>();
    java.util.Set<String> readersSkips = new java.util.HashSet<>();
    for (SourceFormat f : Formats.all()) {
      if (f.telemetry() != null) {
        f.telemetry().skips().forEach(s -> readersSkips.add(f.wireName() + ": " + s.what()));
      }
    }
    for (SourceFormat f : Formats.all()) {
      for (SourceFormat.Skip s : f.skips()) {
        if (!readersSkips.contains(s.what())) { // a reader's skip, passed on by the OTLP files: listed as its reader's
          formatsOf.computeIfAbsent(s.reason() + "\u0000" + s.what(), k -> new ArrayList<>()).add(f.wireName());
        }
      }
      if (f.telemetry() != null) {
        for (SourceFormat.Skip s : f.telemetry().skips()) {
          formatsOf.computeIfAbsent(s.reason() + "\u0000" + s.what(), k -> new ArrayList<>())
              .add(f.wireName() + " (OpenTelemetry)");
        }
      }
    }
    formatsOf.forEach((key, formats) -> {
      String[] parts = key.split("\u0000", 2);
      b.append("| `").append(parts[0]).append("` | ").append(String.join(", ", formats)).append(" | ")
          .append(cell(parts[1])).append(" |\n");
    });
    return b.toString();
  }

  /** What each format yields as events: docs/FORMATS.md's table. */
  public static String yields() {
    StringBuilder b = new StringBuilder("| format | an event for |\n|---|---|\n");
    for (SourceFormat f : Formats.all()) {
      b.append("| ").append(f.wireName()).append(" | ").append(cell(f.yields())).append(" |\n");
    }
    return b.toString();
  }

  /** The keys a source of each format takes in sources.yaml, beside path, type and fields. */
  public static String keys() {
    StringBuilder b = new StringBuilder("| format | key | type | default | what |\n|---|---|---|---|---|\n");
    for (SourceFormat f : Formats.all()) {
      for (Key<?> k : f.keys()) {
        b.append("| ").append(f.wireName()).append(" | `").append(k.name()).append("` | ").append(cell(k.type()))
            .append(" | ").append(cell(k.defaultText())).append(" | ").append(cell(k.doc())).append(" |\n");
      }
    }
    return b.toString();
  }

  /** docs/TRUST.md's row of each format: who writes it, what knockwatch believes of it, what the agent chose in it. */
  public static String trust() {
    StringBuilder b = new StringBuilder("| format | written by | believed | the agent chose |\n|---|---|---|---|\n");
    for (SourceFormat f : Formats.all()) {
      SourceFormat.Trust t = f.trust();
      b.append("| `").append(f.wireName()).append("` | ").append(cell(t.writer())).append(" | ")
          .append(cell(t.believed())).append(" | ").append(cell(t.agentWrites())).append(" |\n");
    }
    return b.toString();
  }

  /** Text for a table cell: a pipe would end the cell. */
  private static String cell(String text) {
    return text.replace("|", "\\|").replace("\n", " ");
  }
}
