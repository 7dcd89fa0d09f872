package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.host.HostConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The {@code curl} examples of the README's tour and of docs/configuration.md, sent as written to a
 * real host served on a free port (the examples' {@code 127.0.0.1:8080} replaced by it): each is
 * answered 200 with the JSON the page shows or describes.
 */
class DocsCurlTest {

  private static final Path ROOT = Path.of("..");
  private static final JsonMapper JSON = JsonMapper.shared();
  private static final Pattern FENCE = Pattern.compile("(?ms)^```sh\n(.*?)^```");
  private final HttpClient http = HttpClient.newHttpClient();

  /** One curl command as the page writes it: its method, URL, headers and body. */
  record Curl(String method, String url, Map<String, String> headers, String body) {

    private static final Pattern QUOTED = Pattern.compile("'([^']*)'|(\\S+)");

    /** The curl commands of a page's shell blocks, a command continued by {@code \\} joined. */
    static List<Curl> of(Path page) throws Exception {
      List<Curl> found = new ArrayList<>();
      Matcher block = FENCE.matcher(Files.readString(page));
      while (block.find()) {
        String joined = block.group(1).replace("\\\n", " ");
        for (String line : joined.lines().toList()) {
          String command = line.replaceFirst("\\s+#.*$", "").strip();
          if (command.startsWith("curl ")) {
            found.add(parse(command));
          }
        }
      }
      return found;
    }

    private static Curl parse(String command) {
      List<String> words = new ArrayList<>();
      Matcher word = QUOTED.matcher(command);
      while (word.find()) {
        words.add(word.group(1) != null ? word.group(1) : word.group(2));
      }
      String method = "GET";
      String url = null;
      Map<String, String> headers = new java.util.LinkedHashMap<>();
      String body = null;
      for (int i = 1; i < words.size(); i++) {
        switch (words.get(i)) {
          case "-s" -> {}
          case "-X" -> method = words.get(++i);
          case "-H" -> {
            String header = words.get(++i);
            headers.put(
                header.substring(0, header.indexOf(':')).strip(),
                header.substring(header.indexOf(':') + 1).strip());
          }
          case "-d" -> {
            body = words.get(++i);
            if (method.equals("GET")) {
              method = "POST";
            }
          }
          default -> url = words.get(i);
        }
      }
      return new Curl(method, url, headers, body);
    }

    HttpRequest request(int port) {
      HttpRequest.Builder builder =
          HttpRequest.newBuilder(URI.create(url.replace("127.0.0.1:8080", "127.0.0.1:" + port)));
      headers.forEach(builder::header);
      return builder
          .method(
              method,
              body == null
                  ? HttpRequest.BodyPublishers.noBody()
                  : HttpRequest.BodyPublishers.ofString(body))
          .build();
    }
  }

  /** The names of the tools of a {@code GET /v1/tools} answer. */
  private static List<String> toolNames(JsonNode answer) {
    List<String> names = new ArrayList<>();
    answer.path("tools").forEach(tool -> names.add(tool.at("/function/name").asString()));
    return names;
  }

  private JsonNode send(Curl curl, int port) throws Exception {
    HttpResponse<String> answer =
        http.send(curl.request(port), HttpResponse.BodyHandlers.ofString());
    assertThat(answer.statusCode()).as(curl + " answered " + answer.body()).isEqualTo(200);
    return JSON.readTree(answer.body());
  }

  @Test
  void theReadmeToursCurlExamplesAreAnsweredAsItShows() throws Exception {
    List<Curl> tour = Curl.of(ROOT.resolve("README.md"));
    assertThat(tour).extracting(Curl::url).hasSize(3);

    try (Host host =
        Host.builder(HostConfig.defaults().withHttp(HostConfig.Http.defaults().withPort(0)))
            .environment(Map.of())
            .build()) {
      int port = host.start().getPort();
      JsonNode tools = send(tour.get(0), port);
      JsonNode guide = send(tour.get(1), port);
      JsonNode profiles = send(tour.get(2), port);

      assertThat(tools.path("profile").asString()).isEqualTo("main");
      assertThat(toolNames(tools))
          .contains("get_from_working_memory", "get_tool_guide", "search_known_services");
      assertThat(guide.path("tool_call_id").asString()).isEqualTo("call-1");
      assertThat(guide.path("is_error").asBoolean()).isFalse();
      assertThat(guide.path("content").asString())
          .startsWith("# Tool calls: how they fail and what to do");
      List<String> names = new ArrayList<>();
      profiles.path("profiles").forEach(profile -> names.add(profile.path("name").asString()));
      assertThat(names).contains("main", "subagent", "scheduled", "a2a_synthesis");
    }
  }

  @Test
  void theConfigurationPagesProfileExampleIsServedAsItSays() throws Exception {
    Path page = ROOT.resolve("docs/configuration.md");
    Matcher yaml =
        Pattern.compile("(?ms)^```yaml\n(profiles:\n  reviewer:.*?)^```")
            .matcher(Files.readString(page));
    assertThat(yaml.find()).as("the profiles example of " + page).isTrue();
    List<Curl> curls = Curl.of(page);
    assertThat(curls).hasSize(1);

    try (Host host =
        Host.builder(
                HostConfig.parse(yaml.group(1), "host.yaml")
                    .withHttp(HostConfig.Http.defaults().withPort(0)))
            .environment(Map.of())
            .build()) {
      JsonNode reviewer = send(curls.get(0), host.start().getPort());

      assertThat(reviewer.path("profile").asString()).isEqualTo("reviewer");
      assertThat(toolNames(reviewer))
          .contains("get_tool_guide")
          .doesNotContain("web_browse", "mcp_register_server");
    }
  }
}
