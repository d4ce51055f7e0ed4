package dev.knockwatch.streams.rules;

/**
 * The policy as it travels on the compacted {@code knockwatch.policy} topic (key
 * {@link #KEY}): the text of {@code rules.yaml} and {@code roles.yaml} (null when absent) and
 * their version. Every streams instance reads the same record, so all judge roles alike.
 */
public record PolicyFiles(String version, String rules, String roles) {

  public static final String KEY = "policy";
}
