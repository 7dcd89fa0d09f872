package dev.toolhost.secrets;

import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * A secret policy says what happens to a tool result that holds a secret: by default it is
 * redacted; a profile or a tool source may say otherwise (a source wins over a profile).
 *
 * @param byDefault what happens when neither the source nor the profile says
 * @param byProfile what happens to the results of callers of a profile, by profile name
 * @param bySource what happens to the results of tools of a source, by source
 */
public record SecretPolicy(
    Action byDefault, Map<String, Action> byProfile, Map<String, Action> bySource) {

  public SecretPolicy {
    Objects.requireNonNull(byDefault, "byDefault");
    byProfile = Map.copyOf(byProfile);
    bySource = Map.copyOf(bySource);
  }

  /** Redact everywhere. */
  public static SecretPolicy redact() {
    return new SecretPolicy(Action.REDACT, Map.of(), Map.of());
  }

  /** What happens to a result of a tool of that source, called under that profile. */
  public Action actionFor(String profile, String source) {
    Action action = bySource.get(source);
    if (action != null) {
      return action;
    }
    return byProfile.getOrDefault(profile, byDefault);
  }

  /** What happens to a result that holds a secret. */
  public enum Action {
    /** The secret's span becomes {@code [REDACTED:{rule}]}, and the result says so. */
    REDACT,
    /** The result becomes an error that names the rule, never the value. */
    BLOCK,
    /** The result passes as it is. */
    OFF;

    /** The action a config names: {@code redact}, {@code block} or {@code off}. */
    public static Action named(String name) {
      return valueOf(name.strip().toUpperCase(Locale.ROOT));
    }
  }
}
