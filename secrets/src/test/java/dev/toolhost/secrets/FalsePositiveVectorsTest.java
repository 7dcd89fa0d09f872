package dev.toolhost.secrets;

import static org.assertj.core.api.Assertions.assertThat;

import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;

/**
 * What looks random but is no secret passes untouched: identifiers, hashes, images, minified code,
 * ordinary structured text, and a public key the host allows.
 */
class FalsePositiveVectorsTest {

  private static final SecretScanner SCANNER = SecretSamples.scanner();

  private static void assertUntouched(String text) {
    SecretScanner.Redaction redaction = SCANNER.redaction(text);
    assertThat(redaction.findings()).isEmpty();
    assertThat(redaction.text()).isEqualTo(text);
  }

  @Test
  void uuidsPassUntouched() {
    Random random = new Random(11);
    List<String> uuids = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      byte[] seed = new byte[16];
      random.nextBytes(seed);
      uuids.add(UUID.nameUUIDFromBytes(seed).toString());
    }

    assertUntouched(String.join("\n", uuids));
    assertUntouched(
        "2025-05-14T09:21:07.412Z INFO request finished request_id="
            + uuids.get(0)
            + " trace="
            + uuids.get(1)
            + " 200 12ms");
    assertUntouched(
        "{\"id\":\""
            + uuids.get(2)
            + "\",\"parentId\":\""
            + uuids.get(3)
            + "\",\"correlationId\":\""
            + uuids.get(4)
            + "\"}");
    assertUntouched("X-Request-Id: " + uuids.get(5) + "\r\nurn:uuid:" + uuids.get(6));
  }

  @Test
  void gitCommitHashesAndDigestsPassUntouched() {
    Random random = new Random(12);
    String[] shas = new String[6];
    for (int i = 0; i < shas.length; i++) {
      shas[i] = SecretSamples.random(random, SecretSamples.HEX, 40);
    }
    byte[] sha512 = new byte[64];
    random.nextBytes(sha512);

    assertUntouched(
        "commit "
            + shas[0]
            + "\nMerge: "
            + shas[1].substring(0, 7)
            + " "
            + shas[2].substring(0, 7)
            + "\nAuthor: Dana Whitlock <dana@whitlock.dev>\nDate:   Wed May 14 09:21:07 2025 +0000\n\n"
            + "    Retry the model call on 429 with backoff\n");
    assertUntouched(
        "tree " + shas[3] + "\nparent " + shas[4] + "\n" + shas[5] + " refs/heads/main\n");
    assertUntouched("https://github.com/toolhost/toolhost/commit/" + shas[0] + "#diff-1");
    assertUntouched(
        "FROM eclipse-temurin:21-jre@sha256:" + shas[1] + shas[2].substring(0, 24) + "\n");
    assertUntouched(
        "\"integrity\": \"sha512-" + Base64.getEncoder().encodeToString(sha512) + "\",");
  }

  @Test
  void aBase64PngPassesUntouched() throws IOException {
    Random random = new Random(13);
    BufferedImage image = new BufferedImage(24, 24, BufferedImage.TYPE_INT_RGB);
    for (int y = 0; y < 24; y++) {
      for (int x = 0; x < 24; x++) {
        image.setRGB(x, y, (x * 10) << 16 | (y * 10) << 8 | random.nextInt(256));
      }
    }
    ByteArrayOutputStream png = new ByteArrayOutputStream();
    assertThat(ImageIO.write(image, "png", png)).isTrue();
    byte[] bytes = png.toByteArray();
    assertThat(HexFormat.of().formatHex(bytes, 0, 8)).isEqualTo("89504e470d0a1a0a");
    String base64 = Base64.getEncoder().encodeToString(bytes);

    assertUntouched("![chart](data:image/png;base64," + base64 + ")");
    assertUntouched("<img alt=\"chart\" src=\"data:image/png;base64," + base64 + "\">");
    assertUntouched(Base64.getMimeEncoder().encodeToString(bytes));
    assertUntouched("{\"image\":\"" + Base64.getUrlEncoder().encodeToString(bytes) + "\"}");
  }

  @Test
  void minifiedJavaScriptPassesUntouched() {
    String js =
        "!function(){\"use strict\";var e={},t=function(n){var r=e[n];if(void 0!==r)return"
            + " r.exports;var o=e[n]={id:n,loaded:!1,exports:{}};return i[n].call(o.exports,o,"
            + "o.exports,t),o.loaded=!0,o.exports};const n=(e,t=300)=>{let n;return(...r)=>{"
            + "clearTimeout(n),n=setTimeout(()=>e.apply(this,r),t)}};function r(e){return fetch("
            + "\"/api/v2/search?q=\"+encodeURIComponent(e),{headers:{Accept:\"application/json\","
            + "\"X-Requested-With\":\"XMLHttpRequest\"},credentials:\"same-origin\"}).then(e=>e.ok?"
            + "e.json():Promise.reject(new Error(\"HTTP \"+e.status)))}document.addEventListener("
            + "\"DOMContentLoaded\",()=>{const e=document.querySelector(\"#search\"),t=document."
            + "querySelector(\".results\");e&&e.addEventListener(\"input\",n(n=>{r(n.target.value)"
            + ".then(e=>{t.innerHTML=e.items.map(e=>`<li data-id=\"${e.id}\">${e.title}</li>`)."
            + "join(\"\")}).catch(console.error)}))});var o={sessionKey:\"th_sess\",tokenHeader:"
            + "\"Authorization\",maxRetries:3,backoffMs:250,apiBase:window.location.origin+\"/api\""
            + "};window.__APP__=Object.freeze(o)}();\n//# sourceMappingURL=app.3f9c2e1b.js.map";

    assertThat(js.length()).isGreaterThan(900);
    assertUntouched(js);
  }

  @Test
  void ordinaryJsonLogsAndMarkdownPassUntouched() {
    assertUntouched(
        "{\"login\":\"dwhitlock\",\"id\":583211,\"node_id\":\"MDQ6VXNlcjU4MzIxMQ==\","
            + "\"avatar_url\":\"https://avatars.githubusercontent.com/u/583211?v=4\","
            + "\"type\":\"User\",\"site_admin\":false,\"created_at\":\"2019-03-02T10:11:12Z\","
            + "\"token_type\":\"bearer\",\"scope\":\"repo,gist\",\"expires_in\":28800,"
            + "\"password_changed_at\":null}");
    assertUntouched(
        """
        2025-05-14T09:21:07.412Z  INFO 48213 --- [nio-8080-exec-3] d.t.server.http.RequestLog : \
        GET /v1/tools 200 12ms
        2025-05-14T09:21:07.988Z  WARN 48213 --- [nio-8080-exec-7] d.t.agent.ModelClient : \
        retrying after 429 (attempt 2 of 5, backoff 1.6s)
        2025-05-14T09:21:08.101Z ERROR 48213 --- [nio-8080-exec-7] d.t.agent.ModelClient : call failed
        java.net.SocketTimeoutException: Read timed out
        \tat java.base/sun.nio.ch.NioSocketImpl.timedRead(NioSocketImpl.java:278)
        \tat dev.toolhost.agent.ModelClient.send(ModelClient.java:211)
        127.0.0.1 - - [14/May/2025:09:21:09 +0000] "GET /static/app.3f9c2e1b.js HTTP/1.1" 200 \
        48213 "-" "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) \
        Chrome/124.0.0.0 Safari/537.36"
        """);
    assertUntouched(
        """
        # Toolhost

        ## Configuration

        Keep the model's key in the environment, never in the file:

        ```bash
        export OPENAI_API_KEY=$OPENAI_API_KEY
        toolhost serve --config toolhost.yaml --port 8080
        ```

        | Setting | Default | Meaning |
        |---|---|---|
        | `secrets.mode` | `redact` | what happens to a secret in a tool's output |
        | `secrets.depth` | `2` | how many encodings are undone |

        Passwords and tokens are replaced by `[REDACTED:rule]`; see \
        [the guide](https://docs.toolhost.dev/guide/secrets#modes).
        """);
  }

  @Test
  void urlsWithoutAPasswordPlaceholdersAndLocalDefaultsPassUntouched() {
    assertUntouched(
        """
        bus: amqp://guest:guest@127.0.0.1:5672/
        cache: redis://cache.internal:6379/0
        db: postgres://db.internal:5432/orders?sslmode=require
        template: postgresql://app:${DB_PASSWORD}@db.internal/app
        example: mysql://user:password@localhost/test and mongodb://admin:changeme@localhost
        docs: mongodb+srv://<user>:<password>@cluster0.example.net/
        jdbc: jdbc:postgresql://db.internal:5432/orders?user=app&password=${PGPASSWORD}
        git: https://github.com/toolhost/toolhost.git#main
        """);
  }

  @Test
  void shortPrefixesOfTheNewProvidersAndProseAboutThemPassUntouched() {
    assertUntouched(
        "OpenRouter keys start with sk-or-v1- and Brave's with BSA; set OPENROUTER_API_KEY and"
            + " BRAVE_API_KEY (placeholders such as BSA-test-key or sk-or-v1-abc123). The BSA (Business Software"
            + " Alliance) report, subsample and absalom are words.");
  }

  @Test
  void ordinaryTextInOtherScriptsAndTypographyPassesUntouched() {
    assertUntouched(
        "Le café est fermé — à demain. Привет, мир. 鍵は「設定」にあります。 “Quoted” text, an"
            + " apostrophe’s mark, 2 × 3 = 6, ½ cup, ﬁle, a non\u00a0breaking space, 🚀 ✅.");
    assertUntouched(
        "| name | value |\n|---|---|\n| token | `${GITHUB_TOKEN}` |\n| page | <b>2</b> |\n"
            + "[docs](https://docs.example.test/guide?lang=en&v=2#secrets)");
  }

  @Test
  void aPublicKeyIsFoundUntilTheHostAllowsIt() {
    Random random = new Random(14);
    String algolia = SecretSamples.random(random, "abcdefghijklmnopqrstuvwxyz0123456789", 32);
    String stripe = "pk_live_51" + SecretSamples.random(random, SecretSamples.ALNUM, 97);
    String firebase = "AIzaSy" + SecretSamples.random(random, SecretSamples.URL_SAFE, 32) + "Q";
    String env =
        "ALGOLIA_APP_ID=K7QX2M9ZLD\nALGOLIA_SEARCH_KEY="
            + algolia
            + "\nSTRIPE_PUBLISHABLE_KEY="
            + stripe
            + "\n";
    String web =
        "const firebaseConfig = {\n  apiKey: \""
            + firebase
            + "\",\n  projectId: \"whitlock-notes\",\n  appId: \"1:555012377:web:4c1d2e\"\n};";

    assertThat(SCANNER.redact(env))
        .isEqualTo(
            "ALGOLIA_APP_ID=K7QX2M9ZLD\nALGOLIA_SEARCH_KEY=[REDACTED:algolia-api-key]\n"
                + "STRIPE_PUBLISHABLE_KEY=[REDACTED:generic-api-key]\n");
    assertThat(SCANNER.redact(web))
        .isEqualTo(
            "const firebaseConfig = {\n  apiKey: \"[REDACTED:gcp-api-key]\",\n"
                + "  projectId: \"whitlock-notes\",\n  appId: \"1:555012377:web:4c1d2e\"\n};");

    SecretScanner allowing =
        SecretScanner.builder(SecretSamples.RULES)
            .allowValue(algolia)
            .allowValue(stripe)
            .allowValue(firebase)
            .build();
    for (String text : List.of(env, web)) {
      SecretScanner.Redaction redaction = allowing.redaction(text);
      assertThat(redaction.findings()).isEmpty();
      assertThat(redaction.text()).isEqualTo(text);
    }
  }

  @Test
  void anAllowedRuleFindsNothing() {
    String token = SecretVectorsTest.family("github-pat").secret();
    String text = "token " + token + " and " + SecretSamples.base64(token);

    assertThat(SCANNER.redaction(text).findings()).hasSize(2);
    assertThat(
            SecretScanner.builder(SecretSamples.RULES)
                .allowRule("github-pat")
                .build()
                .redaction(text)
                .findings())
        .isEmpty();
  }
}
