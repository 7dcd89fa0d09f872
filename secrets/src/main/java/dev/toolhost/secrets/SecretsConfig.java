package dev.toolhost.secrets;

import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import dev.toolhost.core.spi.ConfigProblems;
import dev.toolhost.core.spi.ConfigSections;
import dev.toolhost.core.spi.SectionReading;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import tools.jackson.databind.JsonNode;

/**
 * A secrets config is the {@code secrets:} section of a host config: what happens to a result that
 * holds a secret (by default, by caller profile, by tool source), which rules run (gitleaks' set
 * and Toolhost's own, plus or instead of rule files), what is allowed through, which environment
 * variables hold secrets besides those whose names say so, and how deep encodings are undone.
 *
 * <pre>{@code
 * secrets:
 *   policy: redact                 # redact (default), block or off
 *   profiles: {subagent: block}    # by the caller's profile
 *   sources: {"mcp:docs": off}     # by the tool's source; wins over the profile
 *   rules: [rules/company.toml]    # gitleaks-format rule files: added, same id replaced
 *   replace_rules: false           # true: only the files' rules, not the shipped sets
 *   allow:
 *     values: [pk_live_public...]  # values meant to be seen (public keys)
 *     rules: [generic-api-key]     # rules whose matches are let through
 *   secret_env: [DB_URL]           # variables whose values are secrets, besides *KEY*, *TOKEN*, ...
 *   depth: 2                       # levels of encoding undone (0 to 5)
 * }</pre>
 *
 * @param policy what happens to a result that holds a secret
 * @param rules the rules to run
 * @param allowedValues values let through
 * @param allowedRules rules whose matches are let through
 * @param secretEnv environment variables whose values are secrets, besides those named so
 * @param depth how many levels of encoding are undone
 */
public record SecretsConfig(
    SecretPolicy policy,
    RuleSet rules,
    Set<String> allowedValues,
    Set<String> allowedRules,
    List<String> secretEnv,
    int depth) {

  public SecretsConfig {
    Objects.requireNonNull(policy, "policy");
    Objects.requireNonNull(rules, "rules");
    allowedValues = Set.copyOf(allowedValues);
    allowedRules = Set.copyOf(allowedRules);
    secretEnv = List.copyOf(secretEnv);
  }

  /** Redaction everywhere with gitleaks' rules and Toolhost's own: the default. */
  public static SecretsConfig defaults() {
    return new SecretsConfig(
        SecretPolicy.redact(),
        RuleSet.defaults(),
        Set.of(),
        Set.of(),
        List.of(),
        SecretScanner.DEFAULT_DEPTH);
  }

  /**
   * Reads a section its schema accepts, rule files included (relative to the reading's directory),
   * adding its problems to the reading's; the result is only meaningful when none was added.
   */
  public static SecretsConfig read(JsonNode section, SectionReading reading) {
    ConfigProblems problems = reading.problems();
    Raw raw = ConfigSections.bind(SecretsExtension.NAME, section, Raw.class);
    SecretPolicy.Action byDefault =
        action(raw.policy(), "/secrets/policy", "secrets.policy", problems);
    Map<String, SecretPolicy.Action> byProfile = new LinkedHashMap<>();
    if (raw.profiles() != null) {
      raw.profiles()
          .forEach(
              (profile, action) -> {
                String pointer =
                    "/secrets/profiles/" + profile.replace("~", "~0").replace("/", "~1");
                if (!reading.profiles().contains(profile)) {
                  problems.atKey(
                      pointer,
                      "'secrets.profiles' names an unknown profile '"
                          + profile
                          + "' (known profiles: "
                          + String.join(", ", reading.profiles())
                          + ")");
                }
                byProfile.put(
                    profile, action(action, pointer, "secrets.profiles." + profile, problems));
              });
    }
    Map<String, SecretPolicy.Action> bySource = new LinkedHashMap<>();
    if (raw.sources() != null) {
      raw.sources()
          .forEach(
              (source, action) ->
                  bySource.put(
                      source,
                      action(
                          action,
                          "/secrets/sources/" + source.replace("~", "~0").replace("/", "~1"),
                          "secrets.sources." + source,
                          problems)));
    }
    RuleSet rules =
        Boolean.TRUE.equals(raw.replaceRules())
            ? new RuleSet(Map.of(), List.of())
            : RuleSet.defaults();
    List<String> files = raw.rules() == null ? List.of() : raw.rules();
    boolean ruleFileFailed = false;
    for (int i = 0; i < files.size(); i++) {
      String pointer = "/secrets/rules/" + i;
      Path file = reading.directory().resolve(files.get(i));
      try {
        rules = rules.with(RuleSet.parse(Files.readString(file), file.toString()));
      } catch (IOException e) {
        ruleFileFailed = true;
        problems.atValue(
            pointer,
            "'secrets.rules["
                + i
                + "]' is '"
                + files.get(i)
                + "', which cannot be read ("
                + e.getClass().getSimpleName()
                + ": "
                + e.getMessage()
                + "; expected a gitleaks-format TOML rule file)");
      } catch (IllegalArgumentException e) {
        ruleFileFailed = true;
        problems.atValue(pointer, "'secrets.rules[" + i + "]': " + e.getMessage());
      }
    }
    if (Boolean.TRUE.equals(raw.replaceRules()) && files.isEmpty()) {
      problems.atValue(
          "/secrets/replace_rules",
          "'secrets.replace_rules' is true but 'secrets.rules' lists no rule file (the scanner would"
              + " run no rule)");
    }
    int depth = raw.depth() == null ? SecretScanner.DEFAULT_DEPTH : raw.depth();
    if (depth < 0 || depth > 5) {
      problems.atValue(
          "/secrets/depth",
          "'secrets.depth' is " + depth + " (expected 0 to 5 levels of encoding)");
      depth = SecretScanner.DEFAULT_DEPTH;
    }
    RawAllow allow = raw.allow() == null ? new RawAllow(null, null) : raw.allow();
    List<String> allowedRules = allow.rules() == null ? List.of() : allow.rules();
    for (int i = 0; i < allowedRules.size(); i++) {
      // Unknown only when every rule file loaded: a rule of a file that failed may be the one.
      if (rules.rule(allowedRules.get(i)).isEmpty() && !ruleFileFailed) {
        problems.atValue(
            "/secrets/allow/rules/" + i,
            "'secrets.allow.rules["
                + i
                + "]' names no rule: '"
                + allowedRules.get(i)
                + "' (rule ids are gitleaks', such as generic-api-key)");
      }
    }
    return new SecretsConfig(
        new SecretPolicy(byDefault, byProfile, bySource),
        rules,
        Set.copyOf(allow.values() == null ? List.of() : allow.values()),
        Set.copyOf(allowedRules),
        raw.secretEnv() == null ? List.of() : raw.secretEnv(),
        depth);
  }

  private static SecretPolicy.Action action(
      String raw, String pointer, String dotted, ConfigProblems problems) {
    if (raw == null) {
      return SecretPolicy.Action.REDACT;
    }
    try {
      return SecretPolicy.Action.named(raw);
    } catch (IllegalArgumentException e) {
      problems.atValue(
          pointer, "'" + dotted + "' is '" + raw + "' (expected one of: redact, block, off)");
      return SecretPolicy.Action.REDACT;
    }
  }

  // ---- the section's raw shape: every key optional, so every field may be null ----

  record Raw(
      String policy,
      @JsonPropertyDescription("a mapping of profile names to redact, block or off")
          Map<String, String> profiles,
      @JsonPropertyDescription("a mapping of tool sources to redact, block or off")
          Map<String, String> sources,
      List<String> rules,
      Boolean replaceRules,
      RawAllow allow,
      List<String> secretEnv,
      Integer depth) {}

  record RawAllow(List<String> values, List<String> rules) {}
}
