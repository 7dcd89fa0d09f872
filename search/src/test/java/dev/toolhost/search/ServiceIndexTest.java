package dev.toolhost.search;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

@Timeout(30)
class ServiceIndexTest {

  private final ServiceIndex services = new ServiceIndex();

  private static KnownService.Capability cap(String name, String description) {
    return new KnownService.Capability(name, description);
  }

  private void putSalesServices() {
    services.put(
        new KnownService(
            "SalesOpsAgent",
            ServiceKind.AGENT,
            "Autonomous agent for complex sales workflows and multi-step reporting.",
            List.of(
                cap("audit-pipeline", "Checks the sales pipeline for stale deals."),
                cap("forecast", "Forecasts revenue."),
                cap("generate-qbr-report", "Writes the quarterly business review report."),
                cap("triage-leads", "Sorts new leads.")),
            List.of("sales", "crm")));
    services.put(
        new KnownService(
            "salesforce-mcp",
            ServiceKind.MCP_SERVER,
            "Direct access to Salesforce objects (Accounts, Leads, Opportunities).",
            List.of(
                cap("search_leads", "Searches sales leads."),
                cap("update_opportunity", "Updates an opportunity.")),
            List.of()));
    services.put(
        new KnownService(
            "calendar",
            ServiceKind.WORKER_GROUP,
            "Schedules and reschedules meetings.",
            List.of(cap("reschedule_meeting", "Moves a meeting to another time.")),
            List.of()));
  }

  @Test
  void resultsHaveTheSeedsJsonShape() {
    putSalesServices();

    JsonNode results = services.searchResults("sales report").get("results");

    assertThat(results).hasSize(2);
    JsonNode first = results.get(0);
    assertThat(first.get("id").asString()).isEqualTo("SalesOpsAgent");
    assertThat(first.get("type").asString()).isEqualTo("a2a");
    assertThat(first.get("summary").asString())
        .isEqualTo("Autonomous agent for complex sales workflows and multi-step reporting.");
    assertThat(first.get("relevance_score").asDouble()).isEqualTo(1.0);
    // The skill matching "report" first, then the agent's own order, three at most.
    assertThat(first.get("top_skills").valueStream().map(JsonNode::asString))
        .containsExactly("generate-qbr-report", "audit-pipeline", "forecast");
    assertThat(first.has("top_tools")).isFalse();
    JsonNode second = results.get(1);
    assertThat(second.get("type").asString()).isEqualTo("mcp");
    assertThat(second.get("relevance_score").asDouble()).isBetween(0.0, 1.0);
    assertThat(second.get("top_tools").valueStream().map(JsonNode::asString))
        .containsExactly("search_leads", "update_opportunity");
    assertThat(results.get(0).propertyNames())
        .containsExactly("id", "type", "summary", "relevance_score", "top_skills");
  }

  @Test
  void noMatchIsAnEmptyResultList() {
    putSalesServices();

    assertThat(services.searchResults("kubernetes").toString()).isEqualTo("{\"results\":[]}");
  }

  @Test
  void aBlankQueryIsRejected() {
    assertThatThrownBy(() -> services.searchResults("  "))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("query is required");
  }

  @Test
  void atMostFiveResultsComeBack() {
    for (int i = 0; i < 8; i++) {
      services.put(
          new KnownService(
              "mcp-" + i, ServiceKind.MCP_SERVER, "Weather forecasts " + i, List.of()));
    }

    assertThat(services.searchResults("weather").get("results")).hasSize(5);
  }

  @Test
  void entriesComeGoAndAreReplacedByKindAndId() {
    putSalesServices();
    services.put(new KnownService("calendar", ServiceKind.MCP_SERVER, "Calendar MCP", List.of()));

    assertThat(services.size()).isEqualTo(4);
    assertThat(services.remove(ServiceKind.WORKER_GROUP, "calendar")).isTrue();
    assertThat(services.search("reschedule", 5)).isEmpty();
    services.put(
        new KnownService(
            "SalesOpsAgent", ServiceKind.AGENT, "Now only reschedules meetings", List.of()));
    assertThat(services.search("reschedules", 5))
        .extracting(match -> match.service().id())
        .containsExactly("SalesOpsAgent");
    assertThat(services.search("pipeline", 5)).isEmpty();
    assertThat(services.all())
        .extracting(KnownService::id)
        .containsExactly("SalesOpsAgent", "calendar", "salesforce-mcp");
  }

  @Test
  void contextHintNamesTheTwoBestInTheSeedsWording() {
    putSalesServices();

    Optional<String> hint = services.contextHint("Please prepare the QBR report for sales");

    assertThat(hint)
        .contains(
            """
            Potentially relevant services for this request (call search_known_services for full search):
            - SalesOpsAgent (a2a): Autonomous agent for complex sales workflows and multi-step reporting., top skills: generate-qbr-report, audit-pipeline, forecast
            - salesforce-mcp (mcp): Direct access to Salesforce objects (Accounts, Leads, Opportunities)., top tools: search_leads, update_opportunity\
            """);
    assertThat(services.contextHint("hello")).isEmpty();
  }

  @Test
  void theToolAnswersThroughTheDispatcher() {
    putSalesServices();
    ToolRegistry registry = new ToolRegistry();
    registry.registerAll(services.tools());
    ToolSet set = ToolSet.of(registry, ToolProfiles.MAIN);
    ToolDispatcher dispatcher = ToolDispatcher.create();

    ToolResult found =
        dispatcher.dispatch(
            set, ToolCall.of("search_known_services", "{\"query\": \"reschedule meeting\"}"));
    ToolResult blank =
        dispatcher.dispatch(set, ToolCall.of("search_known_services", "{\"query\": \"\"}"));
    ToolResult missing = dispatcher.dispatch(set, ToolCall.of("search_known_services", "{}"));

    JsonNode json = JsonMapper.shared().readTree(found.text());
    assertThat(json.get("results").get(0).get("id").asString()).isEqualTo("calendar");
    assertThat(json.get("results").get(0).get("type").asString()).isEqualTo("remote");
    assertThat(registry.find("search_known_services").orElseThrow().spec().source())
        .isEqualTo("builtin:search");
    assertThat(blank.isError()).isTrue();
    assertThat(blank.text()).contains("query is required");
    assertThat(missing.isError()).isTrue();
    assertThat(missing.text()).contains("query");
  }

  @Test
  void theToolNamesNoServiceOrToolTheCallersProfileHides() {
    ToolRegistry registry = new ToolRegistry();
    registry.registerAll(services.tools());
    try (RegistryFeed feed = RegistryFeed.attach(registry, services)) {
      registry.registerAll(
          List.of(
              tool("crm_search_leads", "Searches sales leads in the CRM.", "mcp:crm"),
              tool("crm_delete_leads", "Deletes sales leads from the CRM.", "mcp:crm"),
              tool("vault_read_lead_secrets", "Reads sales lead secrets.", "mcp:vault")));
      ToolSet hiding =
          ToolSet.of(
              registry,
              ToolProfiles.MAIN.withoutSources("mcp:vault").withoutNames("crm_delete_leads"));
      ToolDispatcher dispatcher = ToolDispatcher.create();

      String all =
          dispatcher
              .dispatch(
                  ToolSet.of(registry, ToolProfiles.MAIN),
                  ToolCall.of("search_known_services", "{\"query\": \"sales leads\"}"))
              .text();
      String seen =
          dispatcher
              .dispatch(
                  hiding, ToolCall.of("search_known_services", "{\"query\": \"sales leads\"}"))
              .text();

      String hint;
      try (var ignored = dev.toolhost.core.ToolCaller.enter(hiding)) {
        hint = services.contextHint("sales leads secrets").orElseThrow();
      }

      assertThat(hint).contains("crm").doesNotContain("vault").doesNotContain("crm_delete_leads");
      assertThat(all).contains("vault", "crm_delete_leads");
      assertThat(seen)
          .contains("crm", "crm_search_leads")
          .doesNotContain("vault")
          .doesNotContain("crm_delete_leads");
    }
  }

  private static dev.toolhost.core.ExecutableTool tool(
      String name, String description, String source) {
    return dev.toolhost.core.ExecutableTool.of(
        new dev.toolhost.core.ToolSpec(
            name,
            description,
            JsonMapper.shared()
                .createObjectNode()
                .put("type", "object")
                .put("additionalProperties", false),
            source),
        (call, arguments) -> ToolResult.success("ok"));
  }

  @Test
  void theGuideIsPublished() {
    assertThat(ServiceIndex.GUIDE.name()).isEqualTo("service-search");
    assertThat(ServiceIndex.GUIDE.document()).contains("search_known_services", "search_tools");
  }
}
