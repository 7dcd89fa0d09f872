package dev.toolhost.secrets;

import com.google.re2j.Matcher;
import com.google.re2j.Pattern;
import dev.toolhost.core.Redactor;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * A secret scanner finds secrets in text and redacts them: first every secret the host holds, by
 * its exact value, then what the rules of a gitleaks rule set recognise; in plain text and in its
 * encoded forms (base64, standard and URL-safe at any alignment inside a longer run; hex;
 * percent-encoding; {@code \}{@code uXXXX} escapes), decoded recursively to a bounded depth.
 *
 * <p>One pass over the text ({@link Keywords}, an Aho-Corasick table) finds the known values' forms
 * and the rules' keywords; each rule then runs, on RE2/J in time linear in what it reads, only
 * where its keyword is, as far as its shape lets a match reach ({@link Plan}). A match is let
 * through when the rule's or the set's allow-list allows it, when its entropy is below the rule's,
 * or when its value or rule is allowed by the scanner's own allow-list (a public key meant to be
 * seen).
 *
 * <p>A text that holds characters that hide a token from the rules (zero-width and other invisible
 * format characters, soft hyphens, bidirectional controls, full-width and other compatibility
 * forms) is scanned as its {@link FoldedText}, and each secret found there is redacted over the
 * whole span of the original it came from. Every expression ends where a value ends in a URL or
 * markup as well as in code ({@link TokenEnds}).
 *
 * <p>A redacted secret becomes {@code [REDACTED:{rule}]}, or {@code [REDACTED:{name}]} for a known
 * value; for an encoded secret, the encoded characters that hold it go (for base64, its groups of
 * four). Findings never hold the secret. Immutable and thread-safe.
 */
public final class SecretScanner implements Redactor {

  /** The shortest known value that is redacted by value: shorter ones would hit ordinary words. */
  public static final int MIN_KNOWN_LENGTH = 8;

  /** How many levels of encoding are undone by default (base64 of hex of a key is two). */
  public static final int DEFAULT_DEPTH = 2;

  // A run of base64 (either alphabet) long enough to hold a secret of 15 bytes or more, and a run
  // of hex long enough to hold one of 16.
  private static final int MIN_BASE64_RUN = 20;
  private static final int MIN_HEX_RUN = 32;
  private static final Pattern PERCENT = Pattern.compile("%[0-9A-Fa-f]{2}");
  private static final Pattern UNICODE_ESCAPE = Pattern.compile("\\\\u[0-9A-Fa-f]{4}");

  // The text around a keyword a rule's expression runs on: gitleaks' expressions start at most a
  // few dozen characters before their keyword (the generic rule's {0,50} and {0,20} prefixes) and
  // bounded ones end within a few hundred after it. Running them only there, not over the whole
  // text, is what makes a scan fast when keywords are few.
  private static final int BEFORE_KEYWORD = 256;
  private static final int AFTER_KEYWORD = 512;
  private static final int AFTER_UNBOUNDED = 16 * 1024;
  private static final int AFTER_MULTILINE = 2048;
  // gitleaks' semi-generic rules: a name, then one of these operators, then the value.
  private static final String ASSIGNMENT_OPERATORS = "(?:=|>|:{1,3}=|\\|\\||:|=>|\\?=|,)";
  // Their name may start two {0,50} runs before the keyword; the value ends 150 after it.
  private static final int BEFORE_ASSIGNMENT = 110;
  private static final int AFTER_ASSIGNMENT = 230;
  // How far after its keyword an operator may come: the {0,20} of the name's rest, quotes.
  private static final int ASSIGNMENT_REACH = 40;
  private static final int MIN_ASSIGNED = 10;
  // What an expression may open with before its first literal: flags, word boundaries, groups.
  private static final Pattern LEAD = Pattern.compile("(?:\\(\\?i\\)|\\\\b)+");
  // A word an expression writes after a word boundary, such as \bkind: or \bdata:.
  private static final Pattern BOUNDED_WORD = Pattern.compile("\\\\b([a-z][a-z0-9]{3,}:?)");

  private final RuleSet rules;
  private final Keywords keywords;
  // By identity: a rule's record hash would hash its lists on every keyword found.
  private final Map<SecretRule, Plan> plans = new java.util.IdentityHashMap<>();
  // What each word of the automaton stands for, by the word's index in keywords.
  private final List<Entry> entries;
  private final List<SecretRule> alwaysRun;
  // The forms of known values with characters outside ASCII.
  private final List<Known> otherForms;
  private final Set<String> allowedValues;
  private final Set<String> allowedRules;
  private final int depth;

  private SecretScanner(Builder builder) {
    this.rules = builder.rules;
    this.allowedValues = Set.copyOf(builder.allowedValues);
    this.allowedRules = Set.copyOf(builder.allowedRules);
    this.depth = builder.depth;
    Map<String, List<SecretRule>> byKeyword = new LinkedHashMap<>();
    List<SecretRule> always = new ArrayList<>();
    for (SecretRule rule : rules.rules().values()) {
      if (allowedRules.contains(rule.id())) {
        continue;
      }
      plans.put(rule, Plan.of(rule));
      if (rule.keywords().isEmpty()) {
        always.add(rule);
      }
      for (String keyword : rule.keywords()) {
        byKeyword.computeIfAbsent(keyword, any -> new ArrayList<>()).add(rule);
      }
    }
    this.alwaysRun = List.copyOf(always);
    Map<String, Known> variants = new LinkedHashMap<>();
    builder.known.forEach(
        (name, value) -> {
          if (value != null && value.length() >= MIN_KNOWN_LENGTH) {
            for (Map.Entry<String, Finding.Encoding> variant : variants(value).entrySet()) {
              variants.putIfAbsent(
                  variant.getKey(), new Known(variant.getKey(), name, variant.getValue()));
            }
          }
        });
    // One automaton finds the rules' keywords and the known values' forms in one pass, ignoring
    // case; a form's case is checked where it is found. Forms with characters outside ASCII (a
    // plain value that has some) are looked for one by one.
    Map<String, Entry> entries = new LinkedHashMap<>();
    byKeyword.forEach(
        (keyword, keywordRules) ->
            entries.computeIfAbsent(keyword, any -> new Entry()).rules.addAll(keywordRules));
    List<Known> other = new ArrayList<>();
    variants.forEach(
        (form, known) -> {
          if (form.chars().allMatch(c -> c < 128)) {
            entries
                .computeIfAbsent(form.toLowerCase(Locale.ROOT), any -> new Entry())
                .known
                .add(known);
          } else {
            other.add(known);
          }
        });
    entries
        .values()
        .forEach(entry -> entry.plans = entry.rules.stream().map(plans::get).toArray(Plan[]::new));
    this.keywords = Keywords.of(List.copyOf(entries.keySet()), true);
    this.entries = List.copyOf(entries.values());
    this.otherForms = List.copyOf(other);
  }

  /** A builder of a scanner that runs the given rules. */
  public static Builder builder(RuleSet rules) {
    return new Builder(rules);
  }

  /** The rules this scanner runs. */
  public RuleSet rules() {
    return rules;
  }

  /** The secrets in the text, in order, none overlapping another. */
  public List<Finding> scan(String text) {
    return scan(text, 0);
  }

  @Override
  public String redact(String text) {
    return redaction(text).text();
  }

  /** The text with every secret in it redacted, and what was found. */
  public Redaction redaction(String text) {
    List<Finding> findings = scan(text);
    return new Redaction(apply(text, findings), findings);
  }

  @Override
  public Stream stream() {
    return new SecretStream(this);
  }

  /**
   * A redacted text and what was found in it.
   *
   * @param text the text with each finding's span replaced by its marker
   * @param findings what was found, in order
   */
  public record Redaction(String text, List<Finding> findings) {
    public Redaction {
      findings = List.copyOf(findings);
    }
  }

  /** The marker a finding's span becomes. */
  public static String marker(Finding finding) {
    return "[REDACTED:" + finding.rule() + "]";
  }

  /** The text with each finding's span replaced by its marker. */
  static String apply(String text, List<Finding> findings) {
    if (findings.isEmpty()) {
      return text;
    }
    StringBuilder out = new StringBuilder(text.length());
    int at = 0;
    for (Finding finding : findings) {
      out.append(text, at, finding.start()).append(marker(finding));
      at = finding.end();
    }
    return out.append(text, at, text.length()).toString();
  }

  private List<Finding> scan(String text, int level) {
    return scan(text, level, false);
  }

  /**
   * The findings of one text: known values, rules' matches and encoded secrets. A text that holds a
   * character that hides a token from the rules (a zero-width space inside it, a full-width form)
   * is scanned again as its {@link FoldedText}, which the rules read as a reader would, and what is
   * found there is redacted over the span of the original it came from; the findings of the text as
   * it is are dropped then, the folded text holding all of them. The keyword pass says whether the
   * text holds any character outside ASCII, so ordinary text is not read again to know.
   */
  private List<Finding> scan(String text, int level, boolean folded) {
    List<Finding> found = new ArrayList<>();
    others(text, found);
    boolean wide = patterns(text, found);
    if (wide && !folded && FoldedText.hides(text)) {
      FoldedText view = FoldedText.of(text);
      List<Finding> inView = new ArrayList<>();
      // A known value that holds a character folding changes is found where it is, unfolded.
      others(text, inView);
      for (Finding finding : scan(view.text(), level, true)) {
        inView.add(view.original(finding));
      }
      return disjoint(inView);
    }
    if (level < depth) {
      encoded(text, level, found);
    }
    return disjoint(found);
  }

  // ---- known values ----

  /** One form of a known value: the text, the value's name, and how the form encodes it. */
  private record Known(String form, String name, Finding.Encoding encoding) {}

  /** What a word of the automaton stands for: rules' keyword, known values' forms, or both. */
  private static final class Entry {
    final List<SecretRule> rules = new ArrayList<>();
    final List<Known> known = new ArrayList<>();
    // The rules' plans, in the same order: looked up once here, not on every keyword found.
    Plan[] plans;
  }

  /** Finds the forms of known values that the automaton cannot hold, one by one. */
  private void others(String text, List<Finding> found) {
    for (Known known : otherForms) {
      for (int at = text.indexOf(known.form()); at >= 0; at = text.indexOf(known.form(), at + 1)) {
        found.add(
            new Finding(known.name(), at, at + known.form().length(), known.encoding(), true));
      }
    }
  }

  /**
   * The forms a known value may take in text, each with its encoding: plain; hex; percent- and
   * unicode-escaped; and base64 in both alphabets at each of the three alignments it can have
   * inside a longer encoded run (the characters that depend only on the value's own bytes).
   */
  static Map<String, Finding.Encoding> variants(String value) {
    Map<String, Finding.Encoding> variants = new LinkedHashMap<>();
    byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
    variants.put(value, Finding.Encoding.PLAIN);
    variants.putIfAbsent(HexFormat.of().formatHex(bytes), Finding.Encoding.HEX);
    variants.putIfAbsent(HexFormat.of().withUpperCase().formatHex(bytes), Finding.Encoding.HEX);
    StringBuilder percent = new StringBuilder();
    StringBuilder unicode = new StringBuilder();
    for (byte b : bytes) {
      percent.append('%').append(HexFormat.of().withUpperCase().toHexDigits(b));
    }
    for (char c : value.toCharArray()) {
      unicode.append(String.format("\\u%04x", (int) c));
    }
    variants.putIfAbsent(percent.toString(), Finding.Encoding.PERCENT);
    variants.putIfAbsent(unicode.toString(), Finding.Encoding.UNICODE_ESCAPES);
    for (int shift = 0; shift < 3; shift++) {
      byte[] shifted = new byte[shift + bytes.length];
      System.arraycopy(bytes, 0, shifted, shift, bytes.length);
      String encoded = Base64.getEncoder().withoutPadding().encodeToString(shifted);
      // The first characters mix in the unknown bytes before; the last, the unknown bytes after.
      int from = shift == 0 ? 0 : (shift * 8 + 5) / 6;
      int to = ((shift + bytes.length) * 8) / 6;
      if (to - from >= MIN_KNOWN_LENGTH) {
        String core = encoded.substring(from, to);
        variants.putIfAbsent(core, Finding.Encoding.BASE64);
        variants.putIfAbsent(core.replace('+', '-').replace('/', '_'), Finding.Encoding.BASE64);
      }
    }
    return variants;
  }

  // ---- rules ----

  /** Adds the rules' matches and the known values' ASCII forms; says if the text has non-ASCII. */
  private boolean patterns(String text, List<Finding> found) {
    // Where each candidate rule's keywords are: its expression runs only there (see Plan).
    Map<SecretRule, List<int[]>> windows = new java.util.IdentityHashMap<>();
    for (SecretRule rule : alwaysRun) {
      windows.put(rule, new ArrayList<>(List.of(new int[] {0, text.length()})));
    }
    boolean wide =
        keywords.find(
            text,
            (word, start, end) -> {
              Entry entry = entries.get(word);
              for (Known known : entry.known) {
                if (text.regionMatches(start, known.form(), 0, end - start)) {
                  found.add(new Finding(known.name(), start, end, known.encoding(), true));
                }
              }
              for (int r = 0; r < entry.plans.length; r++) {
                SecretRule rule = entry.rules.get(r);
                Plan plan = entry.plans[r];
                switch (plan.mode()) {
                  case PREFIX -> anchored(rule, plan, text, start, found);
                  case ASSIGNMENT -> {
                    if (assignmentAfter(text, end)) {
                      // The name holding the keyword starts on its line; the value may
                      // follow on the next one at most.
                      int lineStart = text.lastIndexOf('\n', start) + 1;
                      int lineEnd = text.indexOf('\n', end);
                      int nextEnd = lineEnd < 0 ? text.length() : text.indexOf('\n', lineEnd + 1);
                      window(
                          windows,
                          rule,
                          text,
                          Math.max(lineStart, start - plan.before()),
                          Math.min(nextEnd < 0 ? text.length() : nextEnd + 1, end + plan.after()));
                    }
                  }
                  case WINDOW -> {
                    int from = Math.max(0, start - plan.before());
                    int to = Math.min(text.length(), end + plan.after());
                    if (plan.nearby().stream().allMatch(near -> contains(text, from, to, near))) {
                      window(windows, rule, text, from, to);
                    }
                  }
                }
              }
            });
    windows.forEach(
        (rule, spans) -> {
          for (int[] span : spans) {
            search(rule, text, span[0], span[1], found);
          }
        });
    return wide;
  }

  /** Adds a window of text for a rule's search, merged with the last one when they overlap. */
  private static void window(
      Map<SecretRule, List<int[]>> windows, SecretRule rule, String text, int from, int to) {
    int start = Math.max(0, from);
    int end = Math.min(text.length(), to);
    List<int[]> spans = windows.computeIfAbsent(rule, any -> new ArrayList<>());
    int[] last = spans.isEmpty() ? null : spans.getLast();
    if (last != null && start <= last[1]) {
      last[1] = Math.max(last[1], end);
    } else {
      spans.add(new int[] {start, end});
    }
  }

  /**
   * Whether an assignment follows the keyword within a short name's reach: an operator (= : > , |),
   * then, after at most five quotes, blanks or equals signs, a value of at least {@link
   * #MIN_ASSIGNED} characters of the kinds gitleaks' semi-generic rules take (letters, digits and
   * {@code _ . = + / : % ~ -}). Their shortest secret is the generic rule's ten characters; a
   * placeholder ({@code changeme}, {@code ${TOKEN}}, {@code ****}) has no such value.
   */
  private static boolean assignmentAfter(String text, int from) {
    int length = text.length();
    int to = Math.min(length, from + ASSIGNMENT_REACH);
    for (int i = from; i < to; i++) {
      char c = text.charAt(i);
      if (c == '=' || c == ':' || c == '>' || c == ',' || c == '|') {
        int at = i + 1;
        for (int skipped = 0;
            skipped < 5 && at < length && "`'\" \t\r\n=".indexOf(text.charAt(at)) >= 0;
            skipped++) {
          at++;
        }
        int value = 0;
        while (at + value < length && valueChar(text.charAt(at + value))) {
          value++;
        }
        if (value >= MIN_ASSIGNED) {
          return true;
        }
      }
    }
    return false;
  }

  private static boolean valueChar(char c) {
    return c >= 'a' && c <= 'z'
        || c >= 'A' && c <= 'Z'
        || c >= '0' && c <= '9'
        || "_.=+/:%~-".indexOf(c) >= 0;
  }

  /** Matches a rule whose match starts with its keyword, anchored at the keyword. */
  private void anchored(SecretRule rule, Plan plan, String text, int at, List<Finding> found) {
    if (plan.wordBoundary()
        && at > 0
        && isWordChar(text.charAt(at - 1))
        && isWordChar(text.charAt(at))) {
      return;
    }
    int to = Math.min(text.length(), at + plan.after());
    Matcher matcher = rule.regex().matcher(new TextWindow(text, at, to));
    if (matcher.lookingAt()) {
      add(rule, matcher, text, at, found);
    }
  }

  /** Searches a window of the text for a rule's matches. */
  private void search(SecretRule rule, String text, int from, int to, List<Finding> found) {
    Matcher matcher =
        rule.regex()
            .matcher(from == 0 && to == text.length() ? text : new TextWindow(text, from, to));
    while (matcher.find()) {
      add(rule, matcher, text, from, found);
    }
  }

  private void add(SecretRule rule, Matcher matcher, String text, int from, List<Finding> found) {
    int group = secretGroup(rule, matcher);
    if (matcher.group(group) == null) {
      return;
    }
    int start = from + matcher.start(group);
    int end = from + matcher.end(group);
    if (group == 0) {
      // A whole match may run on over a line break (jwt-base64's class holds \r and \n):
      // gitleaks trims the \n off a match, and the break is no part of the secret.
      while (start < end && (text.charAt(start) == '\n' || text.charAt(start) == '\r')) {
        start++;
      }
      while (end > start && (text.charAt(end - 1) == '\n' || text.charAt(end - 1) == '\r')) {
        end--;
      }
    }
    String secret = text.substring(start, end);
    if (!secret.isEmpty() && !allowed(rule, secret, matcher.group(), text, start)) {
      found.add(new Finding(rule.id(), start, end, Finding.Encoding.PLAIN));
    }
  }

  /** A word character as RE2's \b sees one: ASCII letters, digits and underscore only. */
  private static boolean isWordChar(char c) {
    return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_';
  }

  /**
   * How a rule runs where its keyword is. gitleaks' rules come in three shapes, and each is run
   * only as far as its shape lets a match reach, not over the whole text: that is what keeps a scan
   * fast when keywords are common words ("key", "token") or fragments ("ey", "sk").
   *
   * <ul>
   *   <li>{@code PREFIX}: the match starts with the keyword ({@code ghp_...}, {@code xoxb-...}):
   *       matched anchored at the keyword, which costs a few characters when it fails.
   *   <li>{@code ASSIGNMENT}: gitleaks' semi-generic shape, a name holding the keyword, an
   *       assignment operator and a value ({@code api_key = "..."}): searched in a window around
   *       the keyword, and only when an operator follows it within reach.
   *   <li>{@code WINDOW}: anything else: searched in a window around the keyword, wide for an
   *       expression with an unbounded repetition (a PEM block).
   * </ul>
   */
  record Plan(Mode mode, int before, int after, boolean wordBoundary, List<String> nearby) {
    enum Mode {
      PREFIX,
      ASSIGNMENT,
      WINDOW
    }

    static Plan of(SecretRule rule) {
      String source = rule.regex().pattern();
      // An expression with an unbounded repetition (a PEM block's [\s\S]{64,}, a JWT's
      // [a-zA-Z0-9]{17,}) reaches far: an Azure or Okta token runs to a few kilobytes. An anchored
      // match reads only as far as it goes, so the long reach costs little. One that crosses lines
      // within bounds ((?s:.){0,200}) reaches a little further than a bounded one.
      int after =
          unbounded(source)
              ? AFTER_UNBOUNDED
              : source.contains("(?s") ? AFTER_MULTILINE : AFTER_KEYWORD;
      if (source.contains(ASSIGNMENT_OPERATORS)) {
        return new Plan(Mode.ASSIGNMENT, BEFORE_ASSIGNMENT, AFTER_ASSIGNMENT, false, List.of());
      }
      // A word boundary before the first literal: the keyword must not follow a word character.
      int firstLiteral = 0;
      while (firstLiteral < source.length()
              && !Character.isLetterOrDigit(source.charAt(firstLiteral))
          || firstLiteral < source.length() - 1
              && source.charAt(firstLiteral) == '\\'
              && source.charAt(firstLiteral + 1) == 'b') {
        firstLiteral += source.charAt(firstLiteral) == '\\' ? 2 : 1;
      }
      boolean boundary = source.substring(0, firstLiteral).contains("\\b");
      List<String> literals = leadingLiterals(source);
      boolean prefix =
          !rule.keywords().isEmpty()
              && rule.keywords().stream()
                  .allMatch(
                      keyword ->
                          literals.stream()
                              .anyMatch(
                                  literal ->
                                      !literal.isEmpty()
                                          && (keyword.startsWith(literal)
                                              || literal.startsWith(keyword))));
      if (prefix) {
        return new Plan(Mode.PREFIX, 0, after, boundary, List.of());
      }
      int before = after == AFTER_KEYWORD ? BEFORE_KEYWORD : AFTER_KEYWORD;
      return new Plan(Mode.WINDOW, before, after, false, wordsOf(source));
    }
  }

  /**
   * The literal texts a match of the expression can start with, lower-cased: the literal prefix of
   * each alternative of a leading group ({@code (?:ghu|ghs)_} gives ghu and ghs), or of the
   * expression itself; an empty one when an alternative starts with anything but a literal.
   */
  static List<String> leadingLiterals(String source) {
    String rest = source;
    Matcher lead = LEAD.matcher(rest);
    if (lead.lookingAt()) {
      rest = rest.substring(lead.end());
    }
    List<String> alternatives = new ArrayList<>();
    if (rest.startsWith("(") && !rest.startsWith("(?i") && !rest.startsWith("(?-")) {
      alternatives = alternatives(rest, rest.startsWith("(?:") ? 3 : 1);
      List<String> literals = new ArrayList<>();
      // A group of one alternative is a capture: what follows it is part of the same prefix.
      for (String alternative : alternatives) {
        literals.addAll(leadingLiterals(alternative));
      }
      return literals;
    }
    alternatives.add(rest);
    List<String> literals = new ArrayList<>();
    for (String alternative : alternatives) {
      StringBuilder literal = new StringBuilder();
      int i = 0;
      for (; i < alternative.length(); i++) {
        char c = alternative.charAt(i);
        if (c == '\\'
            && i + 1 < alternative.length()
            && "._-/:~".indexOf(alternative.charAt(i + 1)) >= 0) {
          literal.append(alternative.charAt(++i));
        } else if (Character.isLetterOrDigit(c) || "_-/:~".indexOf(c) >= 0) {
          literal.append(c);
        } else {
          break;
        }
      }
      // A last character followed by a quantifier may occur zero times: it is not a prefix then.
      if (literal.length() > 0
          && i < alternative.length()
          && "?*{".indexOf(alternative.charAt(i)) >= 0) {
        literal.setLength(literal.length() - 1);
      }
      literals.add(literal.toString().toLowerCase(Locale.ROOT));
    }
    return literals;
  }

  /** Whether the expression repeats something without bound ({@code +}, {@code *}, {n,}). */
  static boolean unbounded(String source) {
    int depth = 0;
    for (int i = 0; i < source.length(); i++) {
      char c = source.charAt(i);
      if (c == '\\') {
        i++;
      } else if (c == '[') {
        depth++;
      } else if (c == ']' && depth > 0) {
        depth--;
      } else if (depth == 0 && (c == '+' || c == '*')) {
        return true;
      } else if (depth == 0 && c == '{') {
        int close = source.indexOf('}', i);
        if (close > i && source.substring(i + 1, close).matches("\\d+,")) {
          return true;
        }
      }
    }
    return false;
  }

  /**
   * The words every match of the expression holds, whichever of its alternatives matches: the words
   * of four or more characters it writes after a word boundary ({@code \bkind:}, {@code \bdata:})
   * in each of its top-level alternatives. A window without all of them holds no match, which
   * spares a rule whose keyword is a common word ({@code secret}) from running on prose.
   */
  static List<String> wordsOf(String source) {
    String body = source.startsWith("(?i)") ? source.substring(4) : source;
    List<String> alternatives = body.startsWith("(?:") ? alternatives(body, 3) : List.of(body);
    List<String> common = null;
    for (String alternative : alternatives) {
      List<String> words = new ArrayList<>();
      Matcher word = BOUNDED_WORD.matcher(alternative);
      while (word.find()) {
        // A word whose last character is optional (https?) is only its shorter part for sure.
        boolean optional =
            word.end() < alternative.length() && "?*".indexOf(alternative.charAt(word.end())) >= 0
                || alternative.startsWith("{0", word.end());
        String found = word.group(1).toLowerCase(Locale.ROOT);
        words.add(optional ? found.substring(0, found.length() - 1) : found);
      }
      if (common == null) {
        common = words;
      } else {
        common.retainAll(words);
      }
    }
    return common == null ? List.of() : List.copyOf(new java.util.LinkedHashSet<>(common));
  }

  /**
   * The top-level alternatives of the group that opens the expression, its body starting at {@code
   * open} (after {@code (} or {@code (?:}): {@code (?:ghu|ghs)_...} gives ghu and ghs.
   */
  private static List<String> alternatives(String source, int open) {
    List<String> alternatives = new ArrayList<>();
    int depth = 0;
    int from = open;
    for (int i = open; i < source.length(); i++) {
      char c = source.charAt(i);
      if (c == '\\') {
        i++;
      } else if (c == '(' || c == '[') {
        depth++;
      } else if ((c == ')' || c == ']') && depth > 0) {
        depth--;
      } else if (c == '|' && depth == 0) {
        alternatives.add(source.substring(from, i));
        from = i + 1;
      } else if (c == ')') {
        alternatives.add(source.substring(from, i));
        break;
      }
    }
    return alternatives;
  }

  /** Whether the word appears in the text between the two places, ignoring case. */
  private static boolean contains(String text, int from, int to, String word) {
    for (int i = from; i + word.length() <= to; i++) {
      if (text.regionMatches(true, i, word, 0, word.length())) {
        return true;
      }
    }
    return false;
  }

  /** A window of a text, as a character sequence, without copying it. */
  private record TextWindow(String text, int from, int to) implements CharSequence {
    @Override
    public int length() {
      return to - from;
    }

    @Override
    public char charAt(int index) {
      return text.charAt(from + index);
    }

    @Override
    public CharSequence subSequence(int start, int end) {
      return new TextWindow(text, from + start, from + end);
    }

    @Override
    public String toString() {
      return text.substring(from, to);
    }
  }

  private static int secretGroup(SecretRule rule, Matcher matcher) {
    if (rule.secretGroup() > 0 && rule.secretGroup() <= matcher.groupCount()) {
      return rule.secretGroup();
    }
    // Several groups, all named, tell which variant matched, not where the secret is: gitleaks'
    // jwt-base64 names the header field an encoded JWT starts with, ten characters of the token.
    // Redacting that group alone would leave the rest of the token readable: the secret is the
    // whole match. (A single group, named or not, is the secret.)
    if (matcher.groupCount() > 1 && rule.regex().namedGroups().size() == matcher.groupCount()) {
      return 0;
    }
    // gitleaks takes the first group when the rule names none.
    return matcher.groupCount() > 0 && matcher.group(1) != null ? 1 : 0;
  }

  private boolean allowed(SecretRule rule, String secret, String match, String text, int at) {
    if (allowedValues.contains(secret) || allowedValues.contains(match)) {
      return true;
    }
    if (rule.entropy() > 0 && entropy(secret) < rule.entropy()) {
      return true;
    }
    String line = line(text, at);
    for (SecretRule.Allowlist allowlist : rule.allowlists()) {
      if (allowlist.allows(secret, match, line)) {
        return true;
      }
    }
    for (SecretRule.Allowlist allowlist : rules.allowlist()) {
      if (allowlist.allows(secret, match, line)) {
        return true;
      }
    }
    return false;
  }

  private static String line(String text, int at) {
    int start = text.lastIndexOf('\n', Math.max(0, at - 1)) + 1;
    int end = text.indexOf('\n', at);
    return text.substring(start, end < 0 ? text.length() : end);
  }

  /** The Shannon entropy of the text, in bits per character. */
  static double entropy(String text) {
    Map<Character, Integer> counts = new LinkedHashMap<>();
    for (char c : text.toCharArray()) {
      counts.merge(c, 1, Integer::sum);
    }
    double entropy = 0;
    for (int count : counts.values()) {
      double p = (double) count / text.length();
      entropy -= p * (Math.log(p) / Math.log(2));
    }
    return entropy;
  }

  // ---- encoded forms ----

  private void encoded(String text, int level, List<Finding> found) {
    // One pass finds the runs worth decoding: base64 (either alphabet) long enough to hold a
    // secret, hex long enough, and whether any percent or unicode escape is there at all. A loop
    // rather than expressions: this pass reads every character of every result.
    int base64Start = -1;
    boolean upper = false;
    boolean slash = false;
    int hexStart = -1;
    boolean percent = false;
    boolean unicode = false;
    int length = text.length();
    for (int i = 0; i <= length; i++) {
      char c = i < length ? text.charAt(i) : ' ';
      int kind = c < 128 ? KINDS[c] : 0;
      if ((kind & HEX_DIGIT) != 0) {
        hexStart = hexStart < 0 ? i : hexStart;
      } else {
        if (hexStart >= 0 && i - hexStart >= MIN_HEX_RUN) {
          hex(text, hexStart, i, level, found);
        }
        hexStart = -1;
      }
      if ((kind & BASE64_CHAR) != 0) {
        if (base64Start < 0) {
          base64Start = i;
          upper = false;
          slash = false;
        }
        upper |= (kind & UPPER) != 0;
        slash |= c == '/';
      } else {
        // Base64 of text has upper-case letters: the first character of each group of four
        // encodes a printable byte's top six bits, 8 to 31, half of them 'I' to 'Z'. A run with
        // none (a UUID, a kebab-case name, hex) holds no encoded text worth decoding.
        if (base64Start >= 0 && i - base64Start >= MIN_BASE64_RUN && upper) {
          int end = i;
          while (end < length && end < i + 2 && text.charAt(end) == '=') {
            end++;
          }
          base64(text, base64Start, end, slash, level, found);
        }
        base64Start = -1;
      }
      if ((kind & ESCAPE) != 0) {
        if (c == '%' && i + 2 < length && isHex(text.charAt(i + 1)) && isHex(text.charAt(i + 2))) {
          percent = true;
        } else if (c == '\\' && i + 5 < length && text.charAt(i + 1) == 'u') {
          unicode = true;
        }
      }
    }
    if (percent) {
      escaped(text, PERCENT, 3, level, found, Finding.Encoding.PERCENT);
    }
    if (unicode && UNICODE_ESCAPE.matcher(text).find()) {
      escaped(text, UNICODE_ESCAPE, 6, level, found, Finding.Encoding.UNICODE_ESCAPES);
    }
  }

  // What each ASCII character can be part of, for the one pass over the text.
  private static final int HEX_DIGIT = 1;
  private static final int BASE64_CHAR = 2;
  private static final int UPPER = 4;
  private static final int ESCAPE = 8;
  private static final byte[] KINDS = kinds();

  private static byte[] kinds() {
    byte[] kinds = new byte[128];
    for (int c = 0; c < 128; c++) {
      int kind = 0;
      if (isHex((char) c)) {
        kind |= HEX_DIGIT;
      }
      if (Character.isLetterOrDigit(c) || c == '+' || c == '/' || c == '_' || c == '-') {
        kind |= BASE64_CHAR;
      }
      if (c >= 'A' && c <= 'Z') {
        kind |= UPPER;
      }
      if (c == '%' || c == '\\') {
        kind |= ESCAPE;
      }
      kinds[c] = (byte) kind;
    }
    return kinds;
  }

  private static boolean isHex(char c) {
    return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F';
  }

  private void hex(String text, int start, int end, int level, List<Finding> found) {
    for (int offset = 0; offset < 2; offset++) {
      int from = start + offset;
      int length = (end - from) / 2 * 2;
      byte[] bytes = HexFormat.of().parseHex(text, from, from + length);
      // One byte in two characters.
      decoded(bytes, level, found, from, 1, 2, Finding.Encoding.HEX, end);
    }
  }

  private void base64(
      String text, int start, int end, boolean slash, int level, List<Finding> found) {
    base64Run(text, start, end, level, found);
    // A URL path joins base64 to its other segments ("/v1/blobs/eGdocF9..."): no alignment of the
    // whole run undoes that when the segments before it are long, nor when the segment is URL-safe
    // and the path's slashes mix the alphabets. Each segment between slashes is tried on its own.
    if (!slash) {
      return;
    }
    int from = start;
    for (int i = start; i <= end; i++) {
      if (i == end || text.charAt(i) == '/') {
        if (i - from >= MIN_BASE64_RUN && (from > start || i < end)) {
          base64Run(text, from, i, level, found);
        }
        from = i + 1;
      }
    }
  }

  private void base64Run(String text, int start, int end, int level, List<Finding> found) {
    String run = text.substring(start, end);
    boolean url = run.indexOf('-') >= 0 || run.indexOf('_') >= 0;
    boolean standard = run.indexOf('+') >= 0 || run.indexOf('/') >= 0;
    if (url && standard) {
      return;
    }
    Base64.Decoder decoder = url ? Base64.getUrlDecoder() : Base64.getDecoder();
    String body = run.replace("=", "");
    // Any alignment: the run may hold the encoded secret starting at any of four places.
    for (int offset = 0; offset < 4; offset++) {
      int length = body.length() - offset;
      // A last group of one character holds no whole byte; of two or three, one or two.
      if (length % 4 == 1) {
        length--;
      }
      if (length < 16) {
        break;
      }
      byte[] bytes;
      try {
        bytes = decoder.decode(body.substring(offset, offset + length));
      } catch (IllegalArgumentException e) {
        continue;
      }
      decoded(bytes, level, found, start + offset, 3, 4, Finding.Encoding.BASE64, end);
    }
  }

  /**
   * Scans decoded bytes, when they read as text, and adds what they hold at its encoded span: a
   * decoded byte at i stands for the encoded characters from {@code start + i / per * width}.
   */
  private void decoded(
      byte[] bytes,
      int level,
      List<Finding> found,
      int start,
      int per,
      int width,
      Finding.Encoding encoding,
      int limit) {
    if (!printable(bytes)) {
      return;
    }
    String text = new String(bytes, StandardCharsets.ISO_8859_1);
    for (Finding inner : scan(text, level + 1)) {
      int from = start + inner.start() / per * width;
      int to = Math.min(limit, start + (inner.end() + per - 1) / per * width);
      found.add(new Finding(inner.rule(), from, to, encoding, inner.known()));
    }
  }

  private void escaped(
      String text,
      Pattern escape,
      int width,
      int level,
      List<Finding> found,
      Finding.Encoding encoding) {
    // The decoded text, and for each of its characters where it came from in the text.
    StringBuilder decoded = new StringBuilder(text.length());
    List<int[]> origins = new ArrayList<>(text.length());
    Matcher matcher = escape.matcher(text);
    int at = 0;
    // A form (application/x-www-form-urlencoded) writes a space as '+':
    // "-----BEGIN+RSA+PRIVATE+KEY" is a PEM header only when read so. The text itself is still
    // scanned as it is.
    boolean form = encoding == Finding.Encoding.PERCENT;
    while (matcher.find()) {
      for (int i = at; i < matcher.start(); i++) {
        decoded.append(form && text.charAt(i) == '+' ? ' ' : text.charAt(i));
        origins.add(new int[] {i, i + 1});
      }
      int value = Integer.parseInt(matcher.group().substring(width == 3 ? 1 : 2), 16);
      decoded.append((char) value);
      origins.add(new int[] {matcher.start(), matcher.end()});
      at = matcher.end();
    }
    for (int i = at; i < text.length(); i++) {
      decoded.append(form && text.charAt(i) == '+' ? ' ' : text.charAt(i));
      origins.add(new int[] {i, i + 1});
    }
    String plain =
        encoding == Finding.Encoding.PERCENT
            ? new String(
                decoded.toString().getBytes(StandardCharsets.ISO_8859_1),
                StandardCharsets.ISO_8859_1)
            : decoded.toString();
    for (Finding inner : scan(plain, level + 1)) {
      int from = origins.get(inner.start())[0];
      int to = origins.get(inner.end() - 1)[1];
      // Kept even where the secret's own characters were not escaped: the escaping may have hidden
      // what the rule needs around it (%22api_key%22%3A%22...%22: the quotes and the colon). A
      // secret in plain sight is also found on the text itself, over the same span, and that
      // finding, made first, is the one kept.
      found.add(new Finding(inner.rule(), from, to, encoding, inner.known()));
    }
  }

  private static boolean printable(byte[] bytes) {
    int printable = 0;
    for (byte b : bytes) {
      if (b >= 0x20 && b < 0x7f || b == '\n' || b == '\r' || b == '\t') {
        printable++;
      }
    }
    return printable * 10 >= bytes.length * 9;
  }

  /**
   * The findings in order of their start, none overlapping another. Where two overlap, the more
   * telling one stays: a known value before a rule's match, a specific rule's ({@code github-pat})
   * before a generic one's ({@code generic-api-key}), then the one that starts first and is longer.
   */
  private static List<Finding> disjoint(List<Finding> found) {
    if (found.size() < 2) {
      return found;
    }
    found.sort(
        Comparator.comparingInt(SecretScanner::rank)
            .thenComparingInt(Finding::start)
            .thenComparing(Comparator.comparingInt(Finding::end).reversed()));
    List<Finding> kept = new ArrayList<>();
    for (Finding finding : found) {
      boolean overlaps = false;
      for (Finding other : kept) {
        if (finding.start() < other.end() && other.start() < finding.end()) {
          overlaps = true;
          break;
        }
      }
      if (!overlaps) {
        kept.add(finding);
      }
    }
    kept.sort(Comparator.comparingInt(Finding::start));
    return kept;
  }

  private static int rank(Finding finding) {
    if (finding.known()) {
      return 0;
    }
    return finding.rule().startsWith("generic") ? 2 : 1;
  }

  /** A builder of a {@link SecretScanner}. */
  public static final class Builder {
    private final RuleSet rules;
    private final Map<String, String> known = new LinkedHashMap<>();
    private final Set<String> allowedValues = new HashSet<>();
    private final Set<String> allowedRules = new HashSet<>();
    private int depth = DEFAULT_DEPTH;

    private Builder(RuleSet rules) {
      this.rules = Objects.requireNonNull(rules, "rules");
    }

    /**
     * A secret the host holds, redacted by value as {@code [REDACTED:{name}]} wherever it appears
     * in any form; values shorter than {@link #MIN_KNOWN_LENGTH} are left out.
     */
    public Builder known(String name, String value) {
      known.put(Objects.requireNonNull(name, "name"), Objects.requireNonNull(value, "value"));
      return this;
    }

    /** A value that is not a secret though a rule matches it (a public key meant to be seen). */
    public Builder allowValue(String value) {
      allowedValues.add(Objects.requireNonNull(value, "value"));
      return this;
    }

    /** A rule whose matches are let through. */
    public Builder allowRule(String id) {
      allowedRules.add(Objects.requireNonNull(id, "id"));
      return this;
    }

    /** How many levels of encoding to undo; {@link #DEFAULT_DEPTH} by default, at most 5. */
    public Builder depth(int depth) {
      if (depth < 0 || depth > 5) {
        throw new IllegalArgumentException("The depth must be 0 to 5: " + depth);
      }
      this.depth = depth;
      return this;
    }

    public SecretScanner build() {
      return new SecretScanner(this);
    }
  }
}
