package dev.toolhost.secrets;

import static dev.toolhost.secrets.SecretSamples.base64;
import static dev.toolhost.secrets.SecretSamples.base64Url;
import static dev.toolhost.secrets.SecretSamples.hex;
import static dev.toolhost.secrets.SecretSamples.percent;
import static dev.toolhost.secrets.SecretSamples.redactedSpan;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import dev.toolhost.secrets.SecretSamples.Family;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Random;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Each kind of secret gitleaks' rules cover, in each form it may take in a tool's output, comes out
 * as exactly the text around it with the secret's span replaced by its rule's marker.
 *
 * <p>An encoded secret's span is the encoded characters that hold its bytes: in base64 the whole
 * groups of four that hold any of them, so that a run's characters that encode only the text around
 * the secret stay (when the secret fills the run, the whole run goes); in hex the two characters of
 * each of its bytes; escaped, its escapes.
 */
class SecretVectorsTest {

  private static final SecretScanner SCANNER = SecretSamples.scanner();

  /** How a secret is written into a text, and what the text must become. */
  enum Form {
    /** In plain sight, in a sentence. */
    PLAIN(Finding.Encoding.PLAIN, "We found ", " in the deploy log.", escaped(text -> text)),
    /** Standard base64 with padding: the secret's groups of the run go. */
    BASE64(
        Finding.Encoding.BASE64,
        "payload ",
        " received",
        grouped(family -> base64(family.snippet()))),
    /** URL-safe base64 without padding, in a query. */
    BASE64_URL(
        Finding.Encoding.BASE64,
        "GET /callback?state=",
        " HTTP/1.1",
        grouped(family -> base64Url(fenced(family)))),
    /**
     * URL-safe base64 as a path segment: the slashes before it join it to one run with the path, in
     * which the two alphabets mix.
     */
    BASE64_URL_IN_PATH(
        Finding.Encoding.BASE64,
        "GET /v1/blobs/",
        "?raw=1 HTTP/1.1",
        grouped(family -> base64Url(fenced(family)))),
    /** Inside a longer encoded file, the secret starting one byte past a 3-byte group. */
    BASE64_IN_LONGER_RUN_AT_1(Finding.Encoding.BASE64, "data ", " end", inFileAt(1)),
    /** Inside a longer encoded file, the secret starting two bytes past a 3-byte group. */
    BASE64_IN_LONGER_RUN_AT_2(Finding.Encoding.BASE64, "data ", " end", inFileAt(2)),
    /** Lower-case hex: the two characters of each of the secret's bytes go. */
    HEX(
        Finding.Encoding.HEX,
        "dump ",
        " end",
        new Writing(
            family -> hex(family.snippet()),
            (family, marker) -> {
              int from = family.before().length();
              int to = from + family.secret().length();
              return redactedSpan(hex(family.snippet()), from, to, 1, 2, marker);
            })),
    /**
     * Every byte percent-escaped. (A URL encoder leaves letters, digits, '-', '_' and '.' as they
     * are, so most tokens URL-encoded are plain text and found as such; escaping every byte is the
     * form that hides them.)
     */
    PERCENT(
        Finding.Encoding.PERCENT, "GET /login?next=", " HTTP/1.1", escaped(SecretSamples::percent)),
    /**
     * As a form encoder writes it ({@code java.net.URLEncoder}): letters, digits, '.', '-', '_' and
     * '*' as they are, a space as '+', the rest escaped. A token of those characters only is then
     * plain text, found as such; what an escape hides (a webhook's slashes, a PEM block's spaces
     * and line breaks, an assignment's '=' and quotes) is found on the decoded text.
     */
    URL_ENCODED(
        Finding.Encoding.PERCENT,
        "curl -d note=",
        " https://notes.test/new",
        escaped(SecretVectorsTest::urlEncoded)) {
      @Override
      Finding.Encoding encoding(Family family) {
        String snippet = family.snippet();
        return urlEncoded(snippet).equals(snippet) ? Finding.Encoding.PLAIN : encoding;
      }
    },
    /** Every character a unicode escape, in a JSON string. */
    UNICODE_ESCAPED(
        Finding.Encoding.UNICODE_ESCAPES, "{\"log\":\"", "\"}", escaped(SecretSamples::unicode));

    final Finding.Encoding encoding;
    private final String before;
    private final String after;
    private final Writing writing;

    Form(Finding.Encoding encoding, String before, String after, Writing writing) {
      this.encoding = encoding;
      this.before = before;
      this.after = after;
      this.writing = writing;
    }

    String text(Family family) {
      return before + writing.written().apply(family) + after;
    }

    /** How the finding says the secret was written. */
    Finding.Encoding encoding(Family family) {
      return encoding;
    }

    String expected(Family family, String marker) {
      return before + writing.redacted().apply(family, marker) + after;
    }
  }

  /** How a form writes a family's snippet, and what of it the scanner must leave, with a marker. */
  record Writing(Function<Family, String> written, BiFunction<Family, String, String> redacted) {}

  /** Written with an escape of each character: the secret's escapes go, the rest stays. */
  static Writing escaped(UnaryOperator<String> escape) {
    return new Writing(
        family -> escape.apply(family.snippet()),
        (family, marker) -> escape.apply(family.before()) + marker + escape.apply(family.after()));
  }

  /** Written as one base64 run: the groups that hold the secret's bytes go. */
  static Writing grouped(Function<Family, String> encoded) {
    return new Writing(
        encoded, (family, marker) -> base64Span(encoded.apply(family), family, 0, marker));
  }

  /** Written inside a longer base64 file, the secret {@code alignment} bytes into a group. */
  static Writing inFileAt(int alignment) {
    return new Writing(
        family -> base64(inFile(family, alignment)),
        (family, marker) ->
            base64Span(
                base64(inFile(family, alignment)),
                family,
                lead(family, alignment).length(),
                marker));
  }

  static String urlEncoded(String text) {
    return URLEncoder.encode(text, StandardCharsets.UTF_8);
  }

  /** The secret ending a note fenced with tildes: its URL-safe base64 has a '-' or '_'. */
  static String fenced(Family family) {
    String note = family.snippet() + SecretSamples.FENCE;
    assertThat(base64Url(note)).containsAnyOf("-", "_");
    return note;
  }

  /**
   * The lines of a small file around the secret, the secret {@code alignment} bytes into a group;
   * its base64 has a '+' or '/'.
   */
  static String inFile(Family family, int alignment) {
    String file = lead(family, alignment) + family.snippet() + SecretSamples.FENCE + "# end\n";
    assertThat(base64(file)).containsAnyOf("+", "/");
    return file;
  }

  /** A file's first line and the spaces that put the secret at that alignment. */
  static String lead(Family family, int alignment) {
    String first = "# deploy settings\n";
    int spaces = Math.floorMod(alignment - first.length() - family.before().length(), 3);
    String lead = first + " ".repeat(spaces);
    assertThat((lead.length() + family.before().length()) % 3).isEqualTo(alignment);
    return lead;
  }

  /** The base64 text with the groups that hold the secret's bytes replaced by the marker. */
  static String base64Span(String encoded, Family family, int lead, String marker) {
    int from = lead + family.before().length();
    return redactedSpan(encoded, from, from + family.secret().length(), 3, 4, marker);
  }

  static Stream<Arguments> familiesAndForms() {
    return SecretSamples.families().stream()
        .flatMap(family -> Stream.of(Form.values()).map(form -> Arguments.of(family, form)));
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("familiesAndForms")
  void eachFamilyIsRedactedExactlyInEachForm(Family family, Form form) {
    String text = form.text(family);
    String rule = family.rule();
    Finding.Encoding encoding = form.encoding(family);
    String expected = form.expected(family, family.marker());
    if (family.rule().equals("jwt")
        && (form == Form.BASE64 || form == Form.BASE64_URL || form == Form.BASE64_URL_IN_PATH)) {
      // gitleaks has a rule for base64-encoded JWTs (jwt-base64: "ZXlK", base64 of "eyJ", then a
      // known header's start, then any base64). Where the encoded token starts a run, that rule
      // finds it in the text itself, to the run's end, and it stays over the decoded token's
      // finding, which starts at the same place and ends no later.
      rule = "jwt-base64";
      encoding = Finding.Encoding.PLAIN;
      String encoded = form == Form.BASE64 ? base64(family.snippet()) : base64Url(fenced(family));
      expected = text.replace(encoded, "[REDACTED:jwt-base64]");
    }
    if (form != Form.PLAIN && form != Form.URL_ENCODED) {
      assertThat(text).doesNotContain(family.secret());
    }

    SecretScanner.Redaction redaction = SCANNER.redaction(text);

    assertThat(redaction.text()).isEqualTo(expected);
    assertThat(redaction.findings())
        .extracting(Finding::rule, Finding::encoding, Finding::known)
        .containsExactly(tuple(rule, encoding, false));
  }

  @Test
  void aGithubTokenIsRedactedInEveryEncodedForm() {
    Family pat = family("github-pat");
    String token = pat.secret();

    assertThat(SCANNER.redact("echo " + base64("x" + token)))
        .isEqualTo("echo [REDACTED:github-pat]");
    assertThat(SCANNER.redact("echo " + hex(token) + " | xxd -r -p"))
        .isEqualTo("echo [REDACTED:github-pat] | xxd -r -p");
    assertThat(SCANNER.redact("echo " + hex(token).toUpperCase() + " | xxd -r -p"))
        .isEqualTo("echo [REDACTED:github-pat] | xxd -r -p");
    assertThat(SCANNER.redact("?t=" + percent(token).toLowerCase()))
        .isEqualTo("?t=[REDACTED:github-pat]");
    // Base64 of hex of the token: two levels, the default depth.
    assertThat(SCANNER.redact("blob " + base64(hex(token)) + " end"))
        .isEqualTo("blob [REDACTED:github-pat] end");
  }

  @Test
  void encodingsDeeperThanTheScannersDepthAreNotUndone() {
    String token = family("github-pat").secret();
    String twice = base64(hex(token));
    String thrice = base64(base64(hex(token)));

    assertThat(SecretScanner.builder(SecretSamples.RULES).depth(1).build().redact(twice))
        .isEqualTo(twice);
    assertThat(SCANNER.redact(thrice)).isEqualTo(thrice);
    assertThat(SecretScanner.builder(SecretSamples.RULES).depth(3).build().redact(thrice))
        .isEqualTo("[REDACTED:github-pat]");
  }

  @Test
  void onlyTheHexOfTheSecretGoesAndTheRestOfTheHexRunStays() {
    String token = family("github-pat").secret();
    String before = hex("id=42;");
    String after = hex(";ok");

    assertThat(SCANNER.redact(before + hex(token) + after))
        .isEqualTo(before + "[REDACTED:github-pat]" + after);
  }

  @Test
  void aPartlyEscapedSecretIsRedactedOverItsEscapedSpan() {
    // A URL encoder escapes only what it must: the '/' of a webhook's path.
    String webhook = family("slack-webhook-url").secret();
    String escaped = webhook.replace(":", "%3A").replace("/", "%2F");

    assertThat(SCANNER.redact("https://ci.test/notify?to=" + escaped + "&on=failure"))
        .isEqualTo("https://ci.test/notify?to=[REDACTED:slack-webhook-url]&on=failure");
  }

  @Test
  void aSpecificRuleWinsOverTheGenericOneOnTheSameSecret() {
    String token = family("github-pat").secret();

    assertThat(SCANNER.redact("GITHUB_TOKEN=" + token + "\n"))
        .isEqualTo("GITHUB_TOKEN=[REDACTED:github-pat]\n");
  }

  @Test
  void aBareOpenRouterKeyIsFoundByToolhostsOwnRule() {
    // gitleaks' rule set has no OpenRouter rule; Toolhost's (toolhost.toml) has. Before it, a bare
    // sk-or-v1-<64 hex> passed outside an assignment to a key-like name.
    String key = family("openrouter-api-key").secret();
    assertThat(RuleSet.gitleaks().rules().keySet()).noneMatch(id -> id.contains("openrouter"));

    assertThat(SCANNER.redact("Use " + key + " for the router."))
        .isEqualTo("Use [REDACTED:openrouter-api-key] for the router.");
    assertThat(SCANNER.redact("OPENROUTER_API_KEY=" + key + "\n"))
        .isEqualTo("OPENROUTER_API_KEY=[REDACTED:openrouter-api-key]\n");
    assertThat(SCANNER.redact("{\"openrouter_key\": \"" + key + "\"}"))
        .isEqualTo("{\"openrouter_key\": \"[REDACTED:openrouter-api-key]\"}");
  }

  @Test
  void aBase64JwtWrappedAtSeventySixColumnsIsRedactedWhole() {
    // `base64` wraps its output at 76 columns: no line decodes to a whole JWT, and only the rule
    // for base64-encoded JWTs sees it, across the line breaks. Its secret is the whole match, not
    // the named group that says which header field came first (ten characters of the token).
    String jwt = family("jwt").secret();
    String wrapped = Base64.getMimeEncoder(76, new byte[] {'\n'}).encodeToString(jwt.getBytes());
    assertThat(wrapped).contains("\n");

    assertThat(SCANNER.redact("$ echo $TOKEN | base64\n" + wrapped + "\n$ "))
        .isEqualTo("$ echo $TOKEN | base64\n[REDACTED:jwt-base64]\n$ ");
  }

  @Test
  void aLicenceKeyAssignmentIsNotLetThroughByTheYoctoRecipeAllowList() {
    // gitleaks lets LICENSE = "..." and SRC_URI = "..." lines through only in Yocto recipes
    // (.bb, .bbappend, .bbclass, .inc: paths AND line). Text has no path, so that list never holds.
    String value = SecretSamples.random(new Random(3), SecretSamples.ALNUM, 32);
    assertThat(
            SecretSamples.allowListed(
                SecretSamples.RULES.rule("generic-api-key").orElseThrow(), value))
        .isFalse();

    assertThat(SCANNER.redact("LICENSE_KEY = \"" + value + "\""))
        .isEqualTo("LICENSE_KEY = \"[REDACTED:generic-api-key]\"");
    assertThat(SCANNER.redact("SRC_TOKEN=\"" + value + "\""))
        .isEqualTo("SRC_TOKEN=\"[REDACTED:generic-api-key]\"");
  }

  @Test
  void aBase64PrivateKeyInAKubernetesManifestIsRedacted() {
    String pem = family("RSA private key").secret();
    String yaml =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: edge-tls\nbinaryData:\n  tls.pem: "
            + base64(pem)
            + "\n";

    assertThat(SCANNER.redact(yaml))
        .isEqualTo(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: edge-tls\nbinaryData:\n  tls.pem:"
                + " [REDACTED:private-key]\n");
  }

  @Test
  void aUrlEncodedBodyIsReadAsAFormDecodesIt() {
    String value = SecretSamples.random(new Random(4), SecretSamples.ALNUM, 28);
    String pem = family("RSA private key").secret();
    String json = "{\"api_key\":\"" + value + "\",\"retries\":3}";

    // The escapes hide the quotes and the colon the rule needs around a secret left as it is.
    assertThat(SCANNER.redact("body=" + urlEncoded(json) + "&v=2"))
        .isEqualTo(
            "body=%7B%22api_key%22%3A%22[REDACTED:generic-api-key]%22%2C%22retries%22%3A3%7D&v=2");
    assertThat(SCANNER.redact(json.replace("\"", "\\u0022")))
        .isEqualTo(
            "{\\u0022api_key\\u0022:\\u0022[REDACTED:generic-api-key]\\u0022,"
                + "\\u0022retries\\u0022:3}");
    // A form's '+' is a space.
    assertThat(SCANNER.redact("note=" + urlEncoded("api_key = \"" + value + "\"") + "&v=2"))
        .isEqualTo("note=api_key+%3D+%22[REDACTED:generic-api-key]%22&v=2");
    assertThat(SCANNER.redact("identity=" + urlEncoded(pem) + "&v=2"))
        .isEqualTo("identity=[REDACTED:private-key]&v=2");
  }

  @Test
  void aTokenFollowedByAnAmpersandIsCaughtByRulesThatWantItsEnd() {
    // Most of gitleaks' rules for tokens of no fixed length (OpenAI, Anthropic, Google, Stripe,
    // JWT,
    // generic-api-key) want the token followed by a quote, white space, ';', an escaped \\n or \\r,
    // or the end of the text, as in source code. TokenEnds widens that end to what ends a value in
    // a URL: in a query an '&' follows, and they match. Rules of fixed length without that
    // condition (GitHub, Slack, AWS) were never affected.
    String google = family("gcp-api-key").secret();
    String github = family("github-pat").secret();
    String openai = family("OpenAI project key").secret();
    String generic = SecretSamples.random(new Random(5), SecretSamples.ALNUM, 28);

    assertThat(
            SCANNER.redact("GET /maps/api/geocode/json?address=Berlin&key=" + google + " HTTP/1.1"))
        .isEqualTo("GET /maps/api/geocode/json?address=Berlin&key=[REDACTED:gcp-api-key] HTTP/1.1");
    assertThat(
            SCANNER.redact("GET /maps/api/geocode/json?key=" + google + "&address=Berlin HTTP/1.1"))
        .isEqualTo("GET /maps/api/geocode/json?key=[REDACTED:gcp-api-key]&address=Berlin HTTP/1.1");
    assertThat(SCANNER.redact("GET /v1/files?api_key=" + openai + "&page=2"))
        .isEqualTo("GET /v1/files?api_key=[REDACTED:openai-api-key]&page=2");
    assertThat(SCANNER.redact("GET /v1/files?api_key=" + generic + "&page=2"))
        .isEqualTo("GET /v1/files?api_key=[REDACTED:generic-api-key]&page=2");
    assertThat(SCANNER.redact("GET /repos?access_token=" + github + "&page=2 HTTP/1.1"))
        .isEqualTo("GET /repos?access_token=[REDACTED:github-pat]&page=2 HTTP/1.1");
  }

  static Family family(String nameOrRule) {
    return SecretSamples.families().stream()
        .filter(family -> family.name().equals(nameOrRule) || family.rule().equals(nameOrRule))
        .findFirst()
        .orElseThrow();
  }
}
