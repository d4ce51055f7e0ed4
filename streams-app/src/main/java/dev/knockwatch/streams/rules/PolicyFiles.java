package dev.knockwatch.streams.rules;

/**
 * The policy as it travels on the compacted {@code knockwatch.policy} topic (key
 * {@link #KEY}): the text of {@code rules.yaml}, of {@code roles.yaml} (null when absent) and of
 * each further {@code *.rules.yaml} by name ({@code moreRules}, in name order), and their version.
 * Every streams instance reads the same record, so all judge roles alike.
 */
public record PolicyFiles(String version, String rules, String roles, java.util.SortedMap<String, String> moreRules) {

  public static final String KEY = "policy";

  public PolicyFiles {
    moreRules = moreRules == null ? new java.util.TreeMap<>() : new java.util.TreeMap<>(moreRules);
  }

  public PolicyFiles(String version, String rules, String roles) {
    this(version, rules, roles, null);
  }
}
