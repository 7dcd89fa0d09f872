package dev.toolhost.search;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSpec;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

@Timeout(30)
class RegistryFeedTest {

  private final ToolRegistry registry = new ToolRegistry();
  private final ServiceIndex services = new ServiceIndex();

  private void register(String name, String description, String source) {
    ObjectNode schema = (ObjectNode) JsonMapper.shared().readTree("{\"type\": \"object\"}");
    registry.register(
        new ToolSpec(name, description, schema, source), (c, a) -> ToolResult.success(""));
  }

  /** The summary of an entry put before its tools were registered, which they never replace. */
  private static final String WEATHER_SUMMARY =
      "Forecasts and alerts from the national weather service.";

  /** Puts the weather server's entry, with its own summary, before any of its tools is here. */
  private void putWeather() {
    services.put(new KnownService("weather", ServiceKind.MCP_SERVER, WEATHER_SUMMARY, List.of()));
  }

  @Test
  void toolsOfMcpServiceAndRemoteSourcesBecomeServicesWithTheirTools() {
    register("get_forecast", "Weather forecast for a city.", "mcp:weather");
    try (RegistryFeed feed = RegistryFeed.attach(registry, services)) {
      register("get_alerts", "Severe weather alerts.", "mcp:weather");
      register("rag_query", "Answers from the document store.", "service:custom-rag");
      register("bill", "Bills a customer.", "remote:billing");
      register("web_search", "Searches the web.", "builtin:web");
      register("mcp_invoke_tool", "Calls a tool of any MCP server.", "mcp:management");

      assertThat(services.all())
          .extracting(s -> s.kind().wireName() + " " + s.id() + ": " + s.summary())
          .containsExactly(
              "mcp weather: MCP server weather: Weather forecast for a city; Severe weather"
                  + " alerts.",
              "remote billing: Remote worker group billing: Bills a customer.",
              "service custom-rag: Tool service custom-rag: Answers from the document store.");
      assertThat(services.find(ServiceKind.MCP_SERVER, "weather").orElseThrow().capabilities())
          .extracting(KnownService.Capability::name)
          .containsExactly("get_forecast", "get_alerts");
      assertThat(services.search("severe alerts", 5))
          .extracting(m -> m.service().id())
          .containsExactly("weather");
    }
  }

  @Test
  void aDerivedSummaryFollowsTheToolsAsTheyComeAndGo() {
    try (RegistryFeed feed = RegistryFeed.attach(registry, services)) {
      register("get_forecast", "Weather forecast for a city. Takes a city name.", "mcp:weather");
      register("get_alerts", "severe weather alerts for a US state", "mcp:weather");
      register("get_radar", "Radar images.", "mcp:weather");
      register("get_tides", "Tide tables for a harbour.", "mcp:weather");
      register("ping", "", "mcp:weather");
      String five = services.find(ServiceKind.MCP_SERVER, "weather").orElseThrow().summary();
      registry.unregister("get_radar");
      registry.unregister("get_tides");
      registry.unregister("ping");
      registry.unregister("get_forecast");

      assertThat(five)
          .isEqualTo(
              "MCP server weather: Weather forecast for a city; Severe weather alerts for a US"
                  + " state; Radar images; and 2 more tools.");
      assertThat(services.find(ServiceKind.MCP_SERVER, "weather").orElseThrow().summary())
          .isEqualTo("MCP server weather: Severe weather alerts for a US state.");
      assertThat(services.search("tide tables", 5)).isEmpty();
    }
  }

  @Test
  void aSummaryOfToolsWithoutDescriptionsNamesThem() {
    assertThat(
            ServiceSummaries.derive(
                ServiceKind.TOOL_SERVICE,
                "rag",
                List.of(
                    new KnownService.Capability("rag_query", " "),
                    new KnownService.Capability("rag_index", ""))))
        .isEqualTo("Tool service rag: tools rag_query, rag_index.");
    assertThat(
            ServiceSummaries.firstSentence(
                "Returns every open issue of the repository with its labels, assignees, milestone,"
                    + " comments and linked pull requests, newest first."))
        .isEqualTo(
            "Returns every open issue of the repository with its labels, assignees, milestone,"
                + " comments...");
  }

  @Test
  void aFeedersSummaryIsKeptAndTheEntryGoesWithItsLastTool() {
    putWeather();
    try (RegistryFeed feed = RegistryFeed.attach(registry, services)) {
      register("get_forecast", "Weather forecast for a city.", "mcp:weather");
      register("get_alerts", "Severe weather alerts.", "mcp:weather");

      registry.unregister("get_forecast");
      KnownService weather = services.find(ServiceKind.MCP_SERVER, "weather").orElseThrow();
      assertThat(weather.summary()).isEqualTo(WEATHER_SUMMARY);
      assertThat(weather.capabilities())
          .extracting(KnownService.Capability::name)
          .containsExactly("get_alerts");

      registry.unregister("get_alerts");
      assertThat(services.find(ServiceKind.MCP_SERVER, "weather")).isEmpty();
    }
  }

  @Test
  void aReplacedToolChangesItsCapabilityInPlaceAndTheEntryKeepsItsSummary() {
    putWeather();
    try (RegistryFeed feed = RegistryFeed.attach(registry, services)) {
      register("get_forecast", "Weather forecast for a city.", "mcp:weather");
      ExecutableTool forecast = registry.find("get_forecast").orElseThrow();

      registry.replace(
          forecast,
          ExecutableTool.of(
              new ToolSpec(
                  "get_forecast",
                  "Hourly weather forecast for a city.",
                  (ObjectNode) JsonMapper.shared().readTree("{\"type\": \"object\"}"),
                  "mcp:weather"),
              (c, a) -> ToolResult.success("")));

      KnownService weather = services.find(ServiceKind.MCP_SERVER, "weather").orElseThrow();
      assertThat(weather.summary()).isEqualTo(WEATHER_SUMMARY);
      assertThat(weather.capabilities())
          .extracting(KnownService.Capability::description)
          .containsExactly("Hourly weather forecast for a city.");
    }
  }

  @Test
  void afterCloseChangesAreNoLongerFollowed() {
    RegistryFeed feed = RegistryFeed.attach(registry, services);
    feed.close();

    register("get_forecast", "Weather forecast for a city.", "mcp:weather");

    assertThat(services.size()).isZero();
  }

  @Test
  void anAgentOfTheConfigBecomesAnAgentEntryDescribedByItsTool() {
    register("research", "Researches a topic on the web and writes a report.", "agent:research");
    try (RegistryFeed feed = RegistryFeed.attach(registry, services)) {
      KnownService agent = services.find(ServiceKind.AGENT, "research").orElseThrow();

      assertThat(agent.summary()).isEqualTo("Researches a topic on the web and writes a report.");
      assertThat(agent.capabilities())
          .extracting(KnownService.Capability::name)
          .containsExactly("research");
      assertThat(
              services.searchResults("write a report").get("results").get(0).get("type").asString())
          .isEqualTo("a2a");
    }
  }

  @Test
  void sourcesNameTheirOwner() {
    assertThat(RegistryFeed.owner("mcp:weather"))
        .contains(new RegistryFeed.Owner(ServiceKind.MCP_SERVER, "weather"));
    assertThat(RegistryFeed.owner("remote:a:b"))
        .contains(new RegistryFeed.Owner(ServiceKind.WORKER_GROUP, "a:b"));
    assertThat(RegistryFeed.owner("builtin:web")).isEmpty();
    assertThat(RegistryFeed.owner("mcp:")).isEmpty();
    assertThat(RegistryFeed.owner("mcp")).isEmpty();
  }
}
