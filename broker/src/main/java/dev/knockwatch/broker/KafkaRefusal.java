package dev.knockwatch.broker;

import java.util.Map;
import java.util.regex.Pattern;
import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.SslAuthenticationException;

/**
 * What a Kafka refusal means, in one line for an operator: a failed login or TLS handshake, an
 * operation the cluster's ACLs do not allow. Waiting does not change these answers, so the
 * commands stop on them at once.
 */
public final class KafkaRefusal {

  /** Keys whose values are secrets: never part of a message. */
  private static final Pattern SECRET_KEY = Pattern.compile("(?i).*(password|jaas|secret|token|credential|\\.key$).*");
  private static final Pattern QUOTED_PASSWORD = Pattern.compile("(?i)(password\\s*=\\s*)(\"[^\"]*\"|\\S+)");

  private KafkaRefusal() {}

  /** The refusal {@code cause} is, as the end of "Kafka at HOST ..."; null when it is none. */
  public static String describe(Throwable cause) {
    if (cause instanceof SslAuthenticationException) {
      return "failed the TLS handshake: " + message(cause);
    }
    if (cause instanceof AuthenticationException) {
      return "refused the login: " + message(cause);
    }
    if (cause instanceof AuthorizationException) {
      return "refused an operation its ACLs do not allow: " + message(cause);
    }
    return null;
  }

  /**
   * The deepest cause of a client that could not be made, as one line, with the values of
   * {@code clientProps}' secret keys (and anything written {@code password=...}) taken out.
   */
  public static String settingsProblem(Throwable e, Map<String, Object> clientProps) {
    Throwable deepest = e;
    while (deepest.getCause() != null && deepest.getCause() != deepest) {
      deepest = deepest.getCause();
    }
    String m = deepest.getClass().getSimpleName() + ": " + message(deepest);
    for (Map.Entry<String, Object> en : clientProps.entrySet()) {
      String v = String.valueOf(en.getValue());
      if (SECRET_KEY.matcher(en.getKey()).matches() && !v.isEmpty()) {
        m = m.replace(v, "[hidden]");
      }
    }
    return QUOTED_PASSWORD.matcher(m).replaceAll("$1[hidden]");
  }

  private static String message(Throwable t) {
    String m = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
    return QUOTED_PASSWORD.matcher(m.replaceAll("\\s+", " ").trim()).replaceAll("$1[hidden]");
  }
}
