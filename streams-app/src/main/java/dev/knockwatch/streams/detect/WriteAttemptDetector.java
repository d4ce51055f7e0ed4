package dev.knockwatch.streams.detect;

import dev.knockwatch.streams.rules.Detector;
import dev.knockwatch.streams.rules.Grain;
import dev.knockwatch.events.Kind;
import dev.knockwatch.events.ViolationEvent;
import dev.knockwatch.streams.rules.Rule;
import dev.knockwatch.events.config.Key;
import dev.knockwatch.events.config.KeyValues;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code write-attempt}: the agent tried to send something out — a refused request whose method
 * carries a body (a form submitted, a file uploaded, a resource changed), or a refused connection
 * of a command that runs an upload tool ({@code curl -F}, {@code scp}, ...). A read that was
 * refused is a knock; a write is an attempt to exfiltrate. The method is what the sandbox or the
 * proxy saw ({@code deny http-request POST ...}); an HTTPS request through the proxy shows only
 * {@code CONNECT}, so the command text (which the agent writes, and may disguise) is the second
 * sign.
 */
public final class WriteAttemptDetector implements Detector<WriteAttemptDetector.Settings> {

  static final Key<List<String>> METHODS = Key.strings("methods", "list of HTTP methods",
      List.of("POST", "PUT", "PATCH", "DELETE"), "POST, PUT, PATCH, DELETE",
      "the refused requests' methods that page (any case)");
  static final Key<List<String>> TOOLS = Key.strings("tools", "list of `tool [flag [value]]`",
      List.of("curl -d", "curl --data", "curl --data-binary", "curl --data-raw", "curl --data-urlencode",
          "curl --json", "curl -F", "curl --form", "curl -T", "curl --upload-file", "curl -X POST", "curl -X PUT",
          "curl --request POST", "curl --request PUT", "wget --post-data", "wget --post-file", "wget --body-data",
          "wget --body-file", "scp", "rsync", "sftp"),
      "curl's body and upload flags, wget's post flags, scp, rsync, sftp",
      "commands whose refused connections page: a program (any directory), and a flag of it (`--flag=value`, "
          + "`-fvalue` match too) with the flag's value");

  /**
   * @param methods the methods that page, upper case
   * @param tools each upload tool as its words: the program, then optionally a flag and its value
   */
  public record Settings(List<String> methods, List<List<String>> tools) implements Detector.Settings {}

  @Override
  public Spec spec() {
    return Spec.of("write-attempt", "a refused request whose method carries a body (`methods`), or a refused"
        + " connection of a command running an upload tool (`tools`): submitting a form, uploading a file", METHODS,
        TOOLS, Grain.PER);
  }

  @Override
  public Settings settings(KeyValues v) {
    List<List<String>> tools = new ArrayList<>();
    for (String t : v.get(TOOLS)) {
      List<String> words = List.of(t.split("\\s+"));
      if (words.size() > 3) {
        v.problem(TOOLS, "tools entry \"" + t + "\" is more than a program, a flag and its value");
      } else {
        tools.add(words);
      }
    }
    return new Settings(v.get(METHODS).stream().map(m -> m.toUpperCase(Locale.ROOT)).toList(), List.copyOf(tools));
  }

  @Override
  public Finding judge(Rule rule, Settings s, Seen seen) {
    ViolationEvent e = seen.event();
    if (e.kind() != Kind.NETWORK || e.host() == null) {
      return null;
    }
    String what = e.url() != null ? e.url() : Finding.target(e);
    if (e.method() != null && s.methods().contains(e.method().toUpperCase(Locale.ROOT))) {
      return Finding.of("refused " + e.method().toUpperCase(Locale.ROOT) + " " + what
          + ": a request that sends a body (a form, an upload)", e);
    }
    List<String> tool = e.commandText() == null ? null : runs(e.commandText(), s.tools());
    if (tool != null) {
      return Finding.of("refused " + what + " to a command running an upload tool (" + String.join(" ", tool) + ")", e);
    }
    return null;
  }

  /**
   * The first of {@code tools} that {@code command} runs; null when none. One pass over the words per
   * tool (the agent writes the command, up to 2,048 characters: no word is looked at twice per tool).
   */
  static List<String> runs(String command, List<List<String>> tools) {
    String[] words = command.split("[\\s;|&()`]+");
    for (int i = 0; i < words.length; i++) {
      words[i] = words[i].replace("'", "").replace("\"", "").replace("\\", "");
    }
    for (List<String> tool : tools) {
      int at = 0;
      while (at < words.length && !program(words[at]).equals(tool.get(0))) {
        at++;
      }
      if (at < words.length && (tool.size() == 1 || hasFlag(words, at + 1, tool))) {
        return tool;
      }
    }
    return null;
  }

  /** Whether a word from {@code from} on is the tool's flag (with its value, when it names one). */
  private static boolean hasFlag(String[] words, int from, List<String> tool) {
    String flag = tool.get(1);
    String value = tool.size() > 2 ? tool.get(2) : null;
    String joined = flag.startsWith("--") ? flag + "=" : flag;
    for (int i = from; i < words.length; i++) {
      String w = words[i];
      if (w.equals(flag)) {
        if (value == null || (i + 1 < words.length && words[i + 1].equalsIgnoreCase(value))) {
          return true;
        }
      } else if (w.startsWith(joined) && w.length() > joined.length()
          && (value == null || w.substring(joined.length()).equalsIgnoreCase(value))) {
        return true;
      }
    }
    return false;
  }

  /** A word as a program name, without its directory ({@code /usr/bin/curl}: {@code curl}). */
  private static String program(String word) {
    return word.substring(word.lastIndexOf('/') + 1);
  }
}
