package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.host.HostConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Drives service search through a real host's HTTP API on a free port: the route's answers, its
 * method and its token are the HTTP front's; working memory's chunking is tested in its module.
 */
@Timeout(60)
class HostServiceSearchTest {

  private static final HttpClient CLIENT =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private static final JsonMapper JSON = JsonMapper.builder().build();

  private Host host;
  private URI base;

  @AfterEach
  void closeHost() {
    if (host != null) {
      host.close();
    }
  }

  @AfterAll
  static void closeClient() {
    CLIENT.close();
  }

  private void start(String yaml) {
    host = Host.builder(HostConfig.parse(yaml, "search-test.yaml")).environment(Map.of()).build();
    base = host.start();
  }

  @Test
  void servicesSearchFindsToolServicesAndRemoteGroupsFromTheRegistry() throws Exception {
    start("http: {port: 0}\n");
    host.registry()
        .register(
            new ToolSpec(
                "create_invoice",
                "Creates an invoice for a customer.",
                (ObjectNode) JSON.readTree("{\"type\": \"object\"}"),
                "service:billing"),
            (call, arguments) -> ToolResult.success("ok"));

    HttpResponse<String> found = get("/v1/services/search?q=customer%20invoice");
    HttpResponse<String> none = get("/v1/services/search?q=weather%20forecast");

    assertThat(found.statusCode()).isEqualTo(200);
    JsonNode results = JSON.readTree(found.body()).get("results");
    assertThat(results).hasSize(1);
    assertThat(results.get(0).get("id").asString()).isEqualTo("billing");
    assertThat(results.get(0).get("type").asString()).isEqualTo("service");
    assertThat(results.get(0).get("summary").asString())
        .isEqualTo("Tool service billing: Creates an invoice for a customer.");
    assertThat(results.get(0).get("relevance_score").asDouble()).isEqualTo(1.0);
    assertThat(results.get(0).get("top_tools").get(0).asString()).isEqualTo("create_invoice");
    assertThat(none.body()).isEqualTo("{\"results\":[]}");
    JsonNode tool = invoke("search_known_services", "{\"arguments\": {\"query\": \"invoice\"}}");
    assertThat(JSON.readTree(tool.get("content").asString()).at("/results/0/id").asString())
        .isEqualTo("billing");
  }

  @Test
  void servicesSearchWithoutAQueryIsABadRequest() throws Exception {
    start("http: {port: 0}\n");

    HttpResponse<String> missing = get("/v1/services/search");
    HttpResponse<String> blank = get("/v1/services/search?q=%20");
    HttpResponse<String> post =
        CLIENT.send(
            HttpRequest.newBuilder(base.resolve("/v1/services/search?q=x"))
                .POST(HttpRequest.BodyPublishers.noBody())
                .build(),
            HttpResponse.BodyHandlers.ofString());

    assertThat(missing.statusCode()).isEqualTo(400);
    assertThat(JSON.readTree(missing.body()).at("/error/code").asString())
        .isEqualTo("invalid_request");
    assertThat(JSON.readTree(missing.body()).at("/error/message").asString())
        .contains("'q' is required");
    assertThat(blank.statusCode()).isEqualTo(400);
    assertThat(post.statusCode()).isEqualTo(405);
  }

  @Test
  void servicesSearchNeedsTheTokenWhenTheHostHasOne() throws Exception {
    start("http: {port: 0, token: s3cret}\n");

    HttpResponse<String> without = get("/v1/services/search?q=invoice");
    HttpResponse<String> with =
        CLIENT.send(
            HttpRequest.newBuilder(base.resolve("/v1/services/search?q=invoice"))
                .header("Authorization", "Bearer s3cret")
                .build(),
            HttpResponse.BodyHandlers.ofString());

    assertThat(without.statusCode()).isEqualTo(401);
    assertThat(with.statusCode()).isEqualTo(200);
  }

  private JsonNode invoke(String tool, String body) throws Exception {
    HttpResponse<String> response =
        CLIENT.send(
            HttpRequest.newBuilder(base.resolve("/v1/tools/" + tool + "/invoke"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    return JSON.readTree(response.body());
  }

  private HttpResponse<String> get(String path) throws Exception {
    return CLIENT.send(
        HttpRequest.newBuilder(base.resolve(path)).build(), HttpResponse.BodyHandlers.ofString());
  }
}
