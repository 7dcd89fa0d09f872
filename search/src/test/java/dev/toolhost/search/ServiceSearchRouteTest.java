package dev.toolhost.search;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.core.spi.Route;
import dev.toolhost.testing.TestHost;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code GET /v1/services/search}, the service search extension's route, on a host with the
 * extension alone: it answers as {@code search_known_services} answers a caller of the profile the
 * query names, and says what is wrong with a request.
 */
class ServiceSearchRouteTest {

  private static final JsonMapper JSON = JsonMapper.shared();

  private static TestHost host() {
    TestHost host =
        TestHost.start(
            """
            profiles:
              no_billing:
                extends: main
                deny_tools: [invoice_lookup]
            """,
            List.of(new ServiceSearchExtension()));
    host.runtime()
        .registry()
        .register(
            ExecutableTool.of(
                new ToolSpec(
                    "invoice_lookup",
                    "Finds a customer's invoice by number.",
                    JSON.createObjectNode().put("type", "object"),
                    "mcp:billing"),
                (call, arguments) -> ToolResult.success("none")));
    return host;
  }

  /** The route's answer to a request with that query. */
  private static Route.Answer search(TestHost host, Map<String, List<String>> query)
      throws Exception {
    return host.request("GET", ServiceSearchExtension.PATH, query, "");
  }

  private static JsonNode body(Route.Answer answer) {
    return JSON.readTree(new String(answer.body(), StandardCharsets.UTF_8));
  }

  @Test
  void theRouteFindsAServiceByItsToolsAndHidesWhatTheProfileHides() throws Exception {
    try (TestHost host = host()) {
      Route.Answer found = search(host, Map.of("q", List.of("customer invoice")));
      Route.Answer hidden =
          search(host, Map.of("q", List.of("customer invoice"), "profile", List.of("no_billing")));

      assertThat(found.status()).isEqualTo(200);
      assertThat(body(found).at("/results/0/id").asString()).isEqualTo("billing");
      assertThat(hidden.status()).isEqualTo(200);
      assertThat(body(hidden).path("results")).isEmpty();
    }
  }

  @Test
  void aMissingQueryAnEmptyProfileAndAnUnknownOneAreNamed() throws Exception {
    try (TestHost host = host()) {
      Route.Answer missing = search(host, Map.of());
      Route.Answer empty = search(host, Map.of("q", List.of("invoice"), "profile", List.of("")));
      Route.Answer unknown =
          search(host, Map.of("q", List.of("invoice"), "profile", List.of("nobody")));

      assertThat(missing.status()).isEqualTo(400);
      assertThat(body(missing).at("/error/message").asString())
          .startsWith("The query parameter 'q' is required");
      assertThat(empty.status()).isEqualTo(400);
      assertThat(body(empty).at("/error/message").asString())
          .contains("'profile' is empty")
          .contains("no_billing");
      assertThat(unknown.status()).isEqualTo(404);
      assertThat(body(unknown).at("/error/code").asString()).isEqualTo("profile_not_found");
      assertThat(body(unknown).at("/error/message").asString())
          .contains("Unknown tool profile 'nobody'");
    }
  }
}
