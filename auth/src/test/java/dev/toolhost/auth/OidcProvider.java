package dev.toolhost.auth;

import dev.toolhost.testing.NodePackages;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * An OpenID provider run locally for a test: panva's {@code oidc-provider} from npm, with one
 * client that gets JWT access tokens by the client credentials grant for the resource it names.
 * Closing stops it.
 */
final class OidcProvider implements AutoCloseable {

  static final String CLIENT = "toolhost-test";
  private static final String SECRET = "toolhost-test-secret";

  private final Process process;
  private final URI issuer;
  private final HttpClient http = HttpClient.newHttpClient();

  private OidcProvider(Process process, URI issuer) {
    this.process = process;
    this.issuer = issuer;
  }

  /** Starts the provider and waits until it listens. */
  static OidcProvider start() throws IOException {
    Path directory = NodePackages.directory();
    Path script = directory.resolve("provider.mjs");
    try (InputStream in = OidcProvider.class.getResourceAsStream("/oidc/provider.mjs")) {
      Files.copy(in, script, StandardCopyOption.REPLACE_EXISTING);
    }
    Process process =
        new ProcessBuilder("node", script.toString())
            .directory(directory.toFile())
            .redirectError(directory.resolve("provider.log").toFile())
            .start();
    BufferedReader out =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    // The first line says where it listens; it ends with nothing said when it fails to start.
    String line = out.readLine();
    if (line == null) {
      process.destroyForcibly();
      throw new IllegalStateException(
          "The OpenID provider did not start: "
              + Files.readString(directory.resolve("provider.log")));
    }
    JsonNode started = JsonMapper.shared().readTree(line);
    return new OidcProvider(process, URI.create(started.get("issuer").asString()));
  }

  /** The provider's issuer URL. */
  URI issuer() {
    return issuer;
  }

  /** Where the provider's public keys are. */
  URI jwks() {
    return URI.create(issuer + "/jwks");
  }

  /** An access token for the resource, whose audience it is, by the client credentials grant. */
  String token(String resource) throws IOException, InterruptedException {
    Map<String, String> form =
        Map.of(
            "grant_type", "client_credentials",
            "client_id", CLIENT,
            "client_secret", SECRET,
            "resource", resource,
            "scope", "tools");
    String body =
        form.entrySet().stream()
            .map(
                field ->
                    field.getKey()
                        + "="
                        + URLEncoder.encode(field.getValue(), StandardCharsets.UTF_8))
            .collect(Collectors.joining("&"));
    HttpResponse<String> answer =
        http.send(
            HttpRequest.newBuilder(URI.create(issuer + "/token"))
                .timeout(Duration.ofSeconds(30))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    if (answer.statusCode() != 200) {
      throw new IllegalStateException(
          "The provider refused a token: " + answer.statusCode() + " " + answer.body());
    }
    return JsonMapper.shared().readTree(answer.body()).get("access_token").asString();
  }

  @Override
  public void close() throws InterruptedException {
    // Its input closing stops it; forcibly if it lingers.
    try {
      process.getOutputStream().close();
    } catch (IOException e) {
      // Already gone.
    }
    if (!process.waitFor(10, TimeUnit.SECONDS)) {
      process.destroyForcibly();
    }
  }
}
