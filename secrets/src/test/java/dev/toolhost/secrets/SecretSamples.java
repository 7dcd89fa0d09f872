package dev.toolhost.secrets;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;

/**
 * Fake secrets for the scanner's tests, and the encodings they are hidden in.
 *
 * <p>Every value is made at run time from a seeded random, so that the tests are repeatable and the
 * source holds no string that a secret scanner run over this repository would flag. Each value
 * matches its gitleaks rule's expression, has more entropy than the rule asks for, and holds none
 * of the stop words of the rule's or the set's allow-list (gitleaks' own data, read from the rule
 * file), nor "true", "false" or "null" (the set's allow-list expressions).
 */
final class SecretSamples {

  /** The rules a host runs by default: gitleaks' and Toolhost's own. */
  static final RuleSet RULES = RuleSet.defaults();

  static final String UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  static final String ALNUM = UPPER + "abcdefghijklmnopqrstuvwxyz0123456789";
  static final String URL_SAFE = ALNUM + "_-";
  static final String DIGITS = "0123456789";
  static final String HEX = "0123456789abcdef";
  static final String BASE32 = UPPER + "234567";

  private SecretSamples() {}

  /** A scanner of the default rules with no known value and nothing allowed. */
  static SecretScanner scanner() {
    return SecretScanner.builder(RULES).build();
  }

  /**
   * One kind of secret as it is written: what goes before it, the secret (the span the scanner
   * redacts), and what follows it. For most the secret stands alone; a generic key needs its
   * assignment around it.
   */
  record Family(String name, String rule, String before, String secret, String after) {

    String snippet() {
      return before + secret + after;
    }

    String marker() {
      return "[REDACTED:" + rule + "]";
    }

    @Override
    public String toString() {
      return name;
    }
  }

  /** The families the shipped rule set covers, each with its fake value. */
  static List<Family> families() {
    List<Family> families = new ArrayList<>();
    families.add(
        family(
            "OpenAI project key",
            "openai-api-key",
            r ->
                bare(
                    "sk-proj-"
                        + random(r, URL_SAFE, 74)
                        + "T3BlbkFJ"
                        + random(r, URL_SAFE, 73)
                        + random(r, ALNUM, 1))));
    families.add(
        family(
            "OpenAI legacy key",
            "openai-api-key",
            r -> bare("sk-" + random(r, ALNUM, 20) + "T3BlbkFJ" + random(r, ALNUM, 20))));
    families.add(
        family(
            "Anthropic API key",
            "anthropic-api-key",
            r -> bare("sk-ant-api03-" + random(r, URL_SAFE, 93) + "AA")));
    families.add(
        family(
            "Anthropic admin key",
            "anthropic-admin-api-key",
            r -> bare("sk-ant-admin01-" + random(r, URL_SAFE, 93) + "AA")));
    // gitleaks has no OpenRouter rule: Toolhost's own rule set (toolhost.toml) has.
    families.add(
        family(
            "OpenRouter key", "openrouter-api-key", r -> bare("sk-or-v1-" + random(r, HEX, 64))));
    families.add(
        family(
            "Brave Search key",
            "brave-search-api-key",
            r -> bare("BSA" + random(r, URL_SAFE, 28))));
    families.add(family("GitHub PAT", "github-pat", r -> bare("ghp_" + random(r, ALNUM, 36))));
    families.add(
        family(
            "GitHub fine-grained PAT",
            "github-fine-grained-pat",
            r -> bare("github_pat_" + random(r, ALNUM, 22) + "_" + random(r, ALNUM, 59))));
    families.add(
        family("GitHub OAuth token", "github-oauth", r -> bare("gho_" + random(r, ALNUM, 36))));
    families.add(
        family("GitHub app token", "github-app-token", r -> bare("ghs_" + random(r, ALNUM, 36))));
    families.add(
        family(
            "GitHub refresh token",
            "github-refresh-token",
            r -> bare("ghr_" + random(r, ALNUM, 36))));
    families.add(
        family(
            "Slack bot token",
            "slack-bot-token",
            r ->
                bare(
                    "xoxb-"
                        + random(r, "123456789", 1)
                        + random(r, DIGITS, 11)
                        + "-"
                        + random(r, "123456789", 1)
                        + random(r, DIGITS, 12)
                        + "-"
                        + random(r, ALNUM, 24))));
    families.add(
        family(
            "Slack user token",
            "slack-user-token",
            r ->
                bare(
                    "xoxp-"
                        + random(r, DIGITS, 12)
                        + "-"
                        + random(r, DIGITS, 12)
                        + "-"
                        + random(r, DIGITS, 13)
                        + "-"
                        + random(r, HEX, 32))));
    families.add(
        family(
            "Slack webhook",
            "slack-webhook-url",
            r ->
                bare(
                    "https://hooks.slack.com/services/T"
                        + random(r, UPPER + DIGITS, 10)
                        + "/B"
                        + random(r, UPPER + DIGITS, 10)
                        + "/"
                        + random(r, ALNUM, 24))));
    families.add(
        family("AWS access key id", "aws-access-token", r -> bare("AKIA" + random(r, BASE32, 16))));
    families.add(
        family(
            "Google API key",
            "gcp-api-key",
            r -> bare("AIzaSy" + random(r, URL_SAFE, 32) + random(r, ALNUM, 1))));
    families.add(
        family(
            "Stripe secret key",
            "stripe-access-token",
            r -> bare("sk_live_51" + random(r, ALNUM, 97))));
    families.add(
        family(
            "Stripe restricted key",
            "stripe-access-token",
            r -> bare("rk_live_51" + random(r, ALNUM, 40))));
    families.add(
        family("RSA private key", "private-key", r -> bare(pem(r, "RSA PRIVATE KEY", 610))));
    families.add(
        family(
            "OpenSSH private key", "private-key", r -> bare(pem(r, "OPENSSH PRIVATE KEY", 400))));
    families.add(family("JWT", "jwt", r -> bare(jwt(r))));
    families.add(
        family(
            "PostgreSQL URL password",
            "database-url-password",
            r -> url("postgresql://orders_app:", r, "@db.internal:5432/orders?sslmode=require")));
    families.add(
        family(
            "MySQL JDBC URL password",
            "database-url-password",
            r -> url("jdbc:mysql://reporter:", r, "@mysql.internal:3306/sales")));
    families.add(
        family(
            "Redis URL password, no user",
            "database-url-password",
            r -> url("redis://:", r, "@cache.internal:6379/0")));
    families.add(
        family(
            "Redis TLS URL password",
            "database-url-password",
            r -> url("rediss://default:", r, "@cache.internal:6380")));
    families.add(
        family(
            "MongoDB SRV URL password",
            "database-url-password",
            r -> url("mongodb+srv://catalog:", r, "@cluster0.ab1cd.mongodb.net/catalog")));
    families.add(
        family(
            "AMQP URL password",
            "database-url-password",
            r -> url("amqp://toolhost:", r, "@broker.internal:5672/%2f")));
    families.add(
        family(
            "JDBC password property",
            "jdbc-password",
            r ->
                url(
                    "jdbc:postgresql://db.internal:5432/orders?user=orders_app&password=",
                    r,
                    "&ssl=true")));
    families.add(
        family(
            "Generic API key assigned",
            "generic-api-key",
            r -> new String[] {"api_key = \"", random(r, ALNUM, 24) + random(r, "_-", 1), "\""}));
    families.add(
        family(
            "Generic password in YAML",
            "generic-api-key",
            r -> new String[] {"  password: ", random(r, URL_SAFE + ".", 20), ""}));
    return families;
  }

  private static String[] bare(String secret) {
    return new String[] {"", secret, ""};
  }

  /**
   * A URL around a random password: letters, digits and a few of the marks URLs leave as they are.
   */
  private static String[] url(String before, Random random, String after) {
    return new String[] {
      before, random(random, ALNUM, 14) + random(random, ALNUM + "-_.~!", 6), after
    };
  }

  /**
   * A family whose value the maker draws from a random seeded by its name, drawn again until it is
   * one the rule finds and no allow-list lets through.
   */
  private static Family family(String name, String rule, Function<Random, String[]> maker) {
    Random random = new Random(0x5EC12E75L ^ name.hashCode());
    SecretRule secretRule = RULES.rule(rule).orElseThrow();
    for (int attempt = 0; attempt < 1000; attempt++) {
      String[] parts = maker.apply(random);
      Family family = new Family(name, rule, parts[0], parts[1], parts[2]);
      if (entropy(family.secret()) > secretRule.entropy()
          && !allowListed(secretRule, family.secret())) {
        return family;
      }
    }
    throw new IllegalStateException("No usable value for " + name);
  }

  /**
   * Whether the rule's or the set's allow-lists would let it through as a secret: one of their stop
   * words is in it, or one of their expressions on the secret matches it; or true, false or null is
   * in it.
   */
  static boolean allowListed(SecretRule rule, String secret) {
    String lower = secret.toLowerCase(Locale.ROOT);
    List<SecretRule.Allowlist> lists = new ArrayList<>(RULES.allowlist());
    lists.addAll(rule.allowlists());
    for (SecretRule.Allowlist list : lists) {
      for (String stopword : list.stopwords()) {
        if (lower.contains(stopword)) {
          return true;
        }
      }
      if (list.target() == SecretRule.Target.SECRET
          && list.regexes().stream().anyMatch(regex -> regex.matcher(secret).find())) {
        return true;
      }
    }
    return lower.contains("true") || lower.contains("false") || lower.contains("null");
  }

  /** Shannon entropy in bits per character, as gitleaks measures it. */
  static double entropy(String text) {
    Map<Integer, Integer> counts = new HashMap<>();
    text.chars().forEach(c -> counts.merge(c, 1, Integer::sum));
    double entropy = 0;
    for (int count : counts.values()) {
      double p = (double) count / text.length();
      entropy -= p * Math.log(p) / Math.log(2);
    }
    return entropy;
  }

  static String random(Random random, String alphabet, int length) {
    StringBuilder out = new StringBuilder(length);
    for (int i = 0; i < length; i++) {
      out.append(alphabet.charAt(random.nextInt(alphabet.length())));
    }
    return out.toString();
  }

  /** A PEM block of the given type around random DER-looking bytes, 64 characters a line. */
  static String pem(Random random, String type, int bytes) {
    byte[] der = new byte[bytes];
    random.nextBytes(der);
    der[0] = 0x30;
    der[1] = (byte) 0x82;
    String body = Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der);
    return "-----BEGIN " + type + "-----\n" + body + "\n-----END " + type + "-----";
  }

  /** A signed-looking JWT: a real header and claims, a random signature. */
  static String jwt(Random random) {
    Base64.Encoder url = Base64.getUrlEncoder().withoutPadding();
    String header = url.encodeToString(bytes("{\"alg\":\"HS256\",\"typ\":\"JWT\"}"));
    String claims =
        url.encodeToString(
            bytes(
                "{\"sub\":\"u_"
                    + random(random, ALNUM, 10)
                    + "\",\"name\":\"Dana Whitlock\",\"iat\":1716239022,\"exp\":1716325422}"));
    return header + "." + claims + "." + random(random, URL_SAFE, 42) + random(random, ALNUM, 1);
  }

  // ---- encodings ----

  static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  /**
   * What ends a note fenced with tildes. Base64 of ASCII text holds a '+' or '/' (URL-safe: '-' or
   * '_') only for a '>', '?' or '~' that ends a group of three bytes; letters, digits and the
   * punctuation of tokens encode the same in both alphabets. Three tildes in a row put one at the
   * end of a group, so that a text ending so differs between the two.
   */
  static final String FENCE = "\n~~~\n";

  static String base64(String text) {
    return Base64.getEncoder().encodeToString(bytes(text));
  }

  /** URL-safe base64 without padding, as in URLs and JWTs. */
  static String base64Url(String text) {
    return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes(text));
  }

  static String hex(String text) {
    return HexFormat.of().formatHex(bytes(text));
  }

  /** Every byte as %XX, as a URL encoder writes what it must escape. */
  static String percent(String text) {
    StringBuilder out = new StringBuilder();
    for (byte b : bytes(text)) {
      out.append('%').append(HexFormat.of().withUpperCase().toHexDigits(b));
    }
    return out.toString();
  }

  /** Every character as a JSON or Java unicode escape. */
  static String unicode(String text) {
    StringBuilder out = new StringBuilder();
    for (char c : text.toCharArray()) {
      out.append(String.format("\\u%04x", (int) c));
    }
    return out.toString();
  }

  /**
   * The encoded text with the span that holds the bytes from {@code from} to {@code to} replaced by
   * the marker: the whole groups of {@code width} characters that encode {@code per} bytes each
   * (base64: 3 bytes in 4 characters; hex: 1 byte in 2), so that no character carrying a bit of the
   * secret is left.
   */
  static String redactedSpan(String encoded, int from, int to, int per, int width, String marker) {
    int start = from / per * width;
    int end = Math.min(encoded.length(), Math.ceilDiv(to, per) * width);
    return encoded.substring(0, start) + marker + encoded.substring(end);
  }
}
