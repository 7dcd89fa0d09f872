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
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.ahocorasick.trie.Emit;
import org.ahocorasick.trie.Trie;

/**
 * A secret scanner finds secrets in text and redacts them: first every secret the host holds, by
 * its exact value, then what the rules of a gitleaks rule set recognise; in plain text and in its
 * encoded forms (base64, standard and URL-safe at any alignment inside a longer run; hex;
 * percent-encoding; {@code \}{@code uXXXX} escapes), decoded recursively to a bounded depth.
 *
 * <p>A keyword prefilter (Aho-Corasick, one pass over the text) picks the rules whose keywords
 * appear; only their expressions run, on RE2/J, in time linear in the text. A match is let through
 * when the rule's or the set's allow-list allows it, when its entropy is below the rule's, or when
 * its value or rule is allowed by the scanner's own allow-list (a public key meant to be seen).
 *
 * <p>A redacted secret becomes {@code [REDACTED:{rule}]}, or {@code [REDACTED:{name}]} for a known
 * value; an encoded secret's whole encoded span goes. Findings never hold the secret. Immutable and
 * thread-safe.
 */
public final class SecretScanner implements Redactor {

  /** The shortest known value that is redacted by value: shorter ones would hit ordinary words. */
  public static final int MIN_KNOWN_LENGTH = 8;

  /** How many levels of encoding are undone by default (base64 of hex of a key is two). */
  public static final int DEFAULT_DEPTH = 2;

  // A run of base64 (either alphabet) long enough to hold a secret of 15 bytes or more.
  private static final Pattern BASE64_RUN = Pattern.compile("[A-Za-z0-9+/_-]{20,}={0,2}");
  private static final Pattern HEX_RUN = Pattern.compile("[0-9a-fA-F]{32,}");
  private static final Pattern PERCENT = Pattern.compile("%[0-9A-Fa-f]{2}");
  private static final Pattern UNICODE_ESCAPE = Pattern.compile("\\\\u[0-9A-Fa-f]{4}");

  private final RuleSet rules;
  private final Trie keywordTrie;
  private final Map<String, List<SecretRule>> rulesByKeyword;
  private final List<SecretRule> alwaysRun;
  private final Trie knownTrie;
  private final Map<String, Known> knownByVariant;
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
      if (rule.keywords().isEmpty()) {
        always.add(rule);
      }
      for (String keyword : rule.keywords()) {
        byKeyword.computeIfAbsent(keyword, any -> new ArrayList<>()).add(rule);
      }
    }
    this.rulesByKeyword = byKeyword;
    this.alwaysRun = List.copyOf(always);
    this.keywordTrie = Trie.builder().ignoreCase().addKeywords(byKeyword.keySet()).build();
    Map<String, Known> variants = new LinkedHashMap<>();
    builder.known.forEach(
        (name, value) -> {
          if (value != null && value.length() >= MIN_KNOWN_LENGTH) {
            for (Map.Entry<String, Finding.Encoding> variant : variants(value).entrySet()) {
              variants.putIfAbsent(variant.getKey(), new Known(name, variant.getValue()));
            }
          }
        });
    this.knownByVariant = variants;
    this.knownTrie = Trie.builder().addKeywords(variants.keySet()).build();
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
    List<Finding> found = new ArrayList<>();
    known(text, found);
    patterns(text, found);
    if (level < depth) {
      encoded(text, level, found);
    }
    return disjoint(found);
  }

  // ---- known values ----

  private record Known(String name, Finding.Encoding encoding) {}

  private void known(String text, List<Finding> found) {
    if (knownByVariant.isEmpty()) {
      return;
    }
    for (Emit emit : knownTrie.parseText(text)) {
      Known known = knownByVariant.get(emit.getKeyword());
      found.add(
          new Finding(known.name(), emit.getStart(), emit.getEnd() + 1, known.encoding(), true));
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

  private void patterns(String text, List<Finding> found) {
    Set<SecretRule> candidates = new LinkedHashSet<>(alwaysRun);
    for (Emit emit : keywordTrie.parseText(text)) {
      candidates.addAll(rulesByKeyword.get(emit.getKeyword().toLowerCase(java.util.Locale.ROOT)));
    }
    for (SecretRule rule : candidates) {
      Matcher matcher = rule.regex().matcher(text);
      while (matcher.find()) {
        int group = secretGroup(rule, matcher);
        if (matcher.group(group) == null) {
          continue;
        }
        int start = matcher.start(group);
        int end = matcher.end(group);
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
        if (secret.isEmpty()) {
          continue;
        }
        if (allowed(rule, secret, matcher.group(), text, start)) {
          continue;
        }
        found.add(new Finding(rule.id(), start, end, Finding.Encoding.PLAIN));
      }
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
    Matcher base64 = BASE64_RUN.matcher(text);
    while (base64.find()) {
      base64(text, base64.start(), base64.end(), level, found);
    }
    Matcher hex = HEX_RUN.matcher(text);
    while (hex.find()) {
      for (int offset = 0; offset < 2; offset++) {
        int start = hex.start() + offset;
        int length = (hex.end() - start) / 2 * 2;
        byte[] bytes = HexFormat.of().parseHex(text, start, start + length);
        // One byte in two characters (not two in two: that marked only the hex's first half).
        decoded(bytes, level, found, start, 1, 2, Finding.Encoding.HEX, hex.end());
      }
    }
    if (PERCENT.matcher(text).find()) {
      escaped(text, PERCENT, 3, level, found, Finding.Encoding.PERCENT);
    }
    if (UNICODE_ESCAPE.matcher(text).find()) {
      escaped(text, UNICODE_ESCAPE, 6, level, found, Finding.Encoding.UNICODE_ESCAPES);
    }
  }

  private void base64(String text, int start, int end, int level, List<Finding> found) {
    base64Run(text, start, end, level, found);
    // A URL path joins base64 to its other segments ("/v1/blobs/eGdocF9..."): no alignment of the
    // whole run undoes that when the segments before it are long, nor when the segment is URL-safe
    // and the path's slashes mix the alphabets. Each segment between slashes is tried on its own.
    int slash = text.indexOf('/', start);
    if (slash < 0 || slash >= end) {
      return;
    }
    int from = start;
    for (int i = start; i <= end; i++) {
      if (i == end || text.charAt(i) == '/') {
        if (i - from >= 20 && (from > start || i < end)) {
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
    // "-----BEGIN+RSA+PRIVATE+KEY"
    // is a PEM header only when read so. The text itself is still scanned as it is.
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
