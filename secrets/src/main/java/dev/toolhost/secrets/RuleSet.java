package dev.toolhost.secrets;

import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.dataformat.toml.TomlMapper;

/**
 * A rule set is the rules a scanner runs and the allow-list every rule shares, read from a rule
 * file in gitleaks' format (TOML: {@code [[rules]]} with {@code id}, {@code regex}, {@code
 * secretGroup}, {@code entropy}, {@code keywords} and {@code [[rules.allowlists]]}; a global {@code
 * [allowlist]}). Rules that match file paths only (no {@code regex}) have no meaning for text and
 * are left out.
 *
 * <p>{@link #gitleaks()} is gitleaks' own rule set, shipped under its MIT licence (see {@code
 * gitleaks-LICENSE.txt} beside it); {@link #toolhost()} is Toolhost's own rules, in the same form,
 * for the keys a Toolhost user holds that gitleaks has no rule for; {@link #defaults()} is both.
 * Every expression read gets {@link TokenEnds}' wider ends: a match may end where a value ends in a
 * URL or markup, not only where it ends in code. Immutable.
 *
 * @param rules the rules, by id, in file order
 * @param allowlist what every rule lets through
 */
public record RuleSet(Map<String, SecretRule> rules, List<SecretRule.Allowlist> allowlist) {

  private static final TomlMapper TOML = TomlMapper.builder().build();
  private static final String GITLEAKS = "gitleaks.toml";
  private static final String TOOLHOST = "toolhost.toml";

  public RuleSet {
    rules = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(rules));
    allowlist = List.copyOf(allowlist);
  }

  /**
   * gitleaks' rule set (config/gitleaks.toml of gitleaks/gitleaks, MIT), as shipped here: read and
   * compiled once per process (a few hundred milliseconds), then shared, being immutable.
   */
  public static RuleSet gitleaks() {
    return Shipped.GITLEAKS_RULES;
  }

  /**
   * Toolhost's own rules (toolhost.toml beside gitleaks' file): the keys of the providers a
   * Toolhost host talks to that gitleaks has no rule for (OpenRouter, Brave Search), and the
   * passwords in database and broker URLs. Each rule's comment in the file names the source of its
   * format.
   */
  public static RuleSet toolhost() {
    return Shipped.TOOLHOST_RULES;
  }

  /** The rules a host runs unless its config says otherwise: gitleaks' and Toolhost's. */
  public static RuleSet defaults() {
    return Shipped.DEFAULT_RULES;
  }

  /** The shipped rule sets, read when first asked for. */
  private static final class Shipped {
    static final RuleSet GITLEAKS_RULES = read(GITLEAKS);
    static final RuleSet TOOLHOST_RULES = read(TOOLHOST);
    static final RuleSet DEFAULT_RULES = GITLEAKS_RULES.with(TOOLHOST_RULES);

    private static RuleSet read(String name) {
      try (InputStream in = RuleSet.class.getResourceAsStream(name)) {
        return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8), name);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  /**
   * Reads a rule file's text.
   *
   * @param source what messages call the file
   * @throws IllegalArgumentException naming the file, and the rule, when the text is not TOML, a
   *     rule has no id, or an expression does not compile
   */
  public static RuleSet parse(String toml, String source) {
    JsonNode root;
    try {
      root = TOML.readTree(toml);
    } catch (JacksonException e) {
      throw new IllegalArgumentException(
          source + ": not a TOML rule file: " + e.getOriginalMessage(), e);
    }
    Map<String, SecretRule> rules = new LinkedHashMap<>();
    int index = 0;
    for (JsonNode rule : root.path("rules")) {
      index++;
      String id = rule.path("id").asString("");
      if (id.isBlank()) {
        throw new IllegalArgumentException(source + ": rule " + index + " has no id");
      }
      if (!rule.hasNonNull("regex")) {
        continue;
      }
      String where = source + ": rule '" + id + "'";
      List<SecretRule.Allowlist> allowlists = new ArrayList<>();
      for (JsonNode allowlist : rule.path("allowlists")) {
        allowlists.add(allowlist(allowlist, where));
      }
      // The older single-table spelling.
      if (rule.path("allowlist").isObject()) {
        allowlists.add(allowlist(rule.path("allowlist"), where));
      }
      rules.put(
          id,
          new SecretRule(
              id,
              rule.path("description").asString(""),
              compile(TokenEnds.widen(rule.path("regex").asString()), where),
              rule.path("secretGroup").asInt(0),
              rule.path("entropy").asDouble(0),
              strings(rule.path("keywords")),
              allowlists));
    }
    List<SecretRule.Allowlist> global = new ArrayList<>();
    if (root.path("allowlist").isObject()) {
      global.add(allowlist(root.path("allowlist"), source + ": [allowlist]"));
    }
    for (JsonNode allowlist : root.path("allowlists")) {
      global.add(allowlist(allowlist, source + ": [[allowlists]]"));
    }
    return new RuleSet(rules, global);
  }

  /** This set with the other's rules added, a rule of the same id replaced, and its allow-list. */
  public RuleSet with(RuleSet other) {
    Map<String, SecretRule> merged = new LinkedHashMap<>(rules);
    merged.putAll(other.rules);
    List<SecretRule.Allowlist> allowed = new ArrayList<>(allowlist);
    allowed.addAll(other.allowlist);
    return new RuleSet(merged, allowed);
  }

  /** The rule of that id, if the set has it. */
  public Optional<SecretRule> rule(String id) {
    return Optional.ofNullable(rules.get(id));
  }

  private static SecretRule.Allowlist allowlist(JsonNode node, String where) {
    List<Pattern> regexes = new ArrayList<>();
    for (String regex : strings(node.path("regexes"))) {
      regexes.add(compile(regex, where + " allow-list"));
    }
    SecretRule.Target target =
        switch (node.path("regexTarget").asString("secret").toLowerCase(Locale.ROOT)) {
          case "match" -> SecretRule.Target.MATCH;
          case "line" -> SecretRule.Target.LINE;
          default -> SecretRule.Target.SECRET;
        };
    boolean both = node.path("condition").asString("OR").equalsIgnoreCase("AND");
    if (both && (!node.path("paths").isEmpty() || !node.path("commits").isEmpty())) {
      // With AND, a list that names paths or commits holds only in those files or commits
      // (gitleaks'
      // generic-api-key lets LICENSE = "..." through in Yocto recipes only). Text has neither, so
      // the list never holds; left as it was, its line expressions alone let any LICENSE_KEY =
      // "..."
      // through.
      return new SecretRule.Allowlist(List.of(), target, List.of(), true);
    }
    return new SecretRule.Allowlist(regexes, target, strings(node.path("stopwords")), both);
  }

  private static Pattern compile(String regex, String where) {
    try {
      return Pattern.compile(regex);
    } catch (PatternSyntaxException e) {
      throw new IllegalArgumentException(
          where + ": the expression does not compile: " + e.getMessage(), e);
    }
  }

  private static List<String> strings(JsonNode array) {
    List<String> strings = new ArrayList<>();
    array.forEach(each -> strings.add(each.asString()));
    return strings;
  }
}
