package dev.toolhost.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.search.KnownService;
import dev.toolhost.search.RegistryFeed;
import dev.toolhost.search.ServiceIndex;
import dev.toolhost.search.ServiceKind;
import dev.toolhost.testing.ScriptedModelServer;
import dev.toolhost.testing.ScriptedReply;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.JsonNodeFactory;

/** A model writes the service summaries once per set of tools; what others wrote is kept. */
@Timeout(30)
class SummaryWriterTest {

  private static final String WRITTEN =
      "Forecasts and severe-weather alerts for any city, from the national weather service.";

  private final ScriptedModelServer server = ScriptedModelServer.start();
  private final ToolRegistry registry = new ToolRegistry();
  private final ServiceIndex index = new ServiceIndex();
  private final RegistryFeed feed = RegistryFeed.attach(registry, index);
  private final ModelClient client =
      ModelClient.builder(new ModelEndpoint(server.baseUrl(), "summariser", "KEY")).build();
  private SummaryWriter writer;

  @AfterEach
  void close() {
    if (writer != null) {
      writer.close();
    }
    feed.close();
    client.close();
    server.close();
  }

  private void register(String name, String description, String source) {
    registry.register(
        new ToolSpec(
            name, description, JsonNodeFactory.instance.objectNode().put("type", "object"), source),
        (call, arguments) -> ToolResult.success("ok"));
  }

  private String summary(ServiceKind kind, String id) {
    return index.find(kind, id).map(KnownService::summary).orElse("");
  }

  @Test
  void aSummaryIsWrittenOnceFromTheToolsAndCachedForTheSameTools() throws Exception {
    server.enqueue(ScriptedReply.answer(WRITTEN));
    writer = SummaryWriter.start(index, registry, client);

    register("get_forecast", "Weather forecast for a city.", "mcp:weather");
    register("get_alerts", "Severe weather alerts for a US state.", "mcp:weather");

    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> summary(ServiceKind.MCP_SERVER, "weather").equals(WRITTEN));
    JsonNode messages = server.takeRequest().json().get("messages");
    assertThat(messages.get(0).get("content").asString()).isEqualTo(SummaryWriter.INSTRUCTIONS);
    assertThat(messages.get(1).get("content").asString())
        .isEqualTo(
            "MCP server weather\nTools:\n- get_forecast: Weather forecast for a city.\n"
                + "- get_alerts: Severe weather alerts for a US state.");
    assertThat(index.search("national weather service", 5))
        .extracting(match -> match.service().id())
        .containsExactly("weather");

    // The server goes and comes back with the same tools: the cached summary, no second request.
    registry.unregister("get_forecast");
    registry.unregister("get_alerts");
    assertThat(index.find(ServiceKind.MCP_SERVER, "weather")).isEmpty();
    register("get_forecast", "Weather forecast for a city.", "mcp:weather");
    register("get_alerts", "Severe weather alerts for a US state.", "mcp:weather");
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> summary(ServiceKind.MCP_SERVER, "weather").equals(WRITTEN));
    assertThat(server.requestCount()).isEqualTo(1);
    assertThat(writer.cached()).isEqualTo(1);
  }

  @Test
  void aFeedersSummaryAndAnAgentsAreNeverRewritten() throws Exception {
    index.put(
        new KnownService(
            "rag", ServiceKind.TOOL_SERVICE, "The company's document store.", List.of()));
    register("rag_query", "Answers from the document store.", "service:rag");
    register("helper", "Answers briefly.", "agent:helper");

    writer = SummaryWriter.start(index, registry, client);
    writer.pass();

    assertThat(summary(ServiceKind.TOOL_SERVICE, "rag")).isEqualTo("The company's document store.");
    assertThat(summary(ServiceKind.AGENT, "helper")).isEqualTo("Answers briefly.");
    assertThat(server.requestCount()).isZero();
  }

  @Test
  void anAgentKnownByItsSkillsGetsAWrittenSummaryToo() throws Exception {
    server.enqueue(ScriptedReply.answer("Plans trips: flights, hotels and day-by-day schedules."));
    index.put(
        new KnownService(
            "travel",
            ServiceKind.AGENT,
            "Agent travel: Books flights; Finds hotels.",
            List.of(
                new KnownService.Capability("book_flight", "Books flights."),
                new KnownService.Capability("find_hotel", "Finds hotels."))));

    writer = SummaryWriter.start(index, registry, client);

    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                summary(ServiceKind.AGENT, "travel")
                    .equals("Plans trips: flights, hotels and day-by-day schedules."));
    assertThat(server.takeRequest().json().at("/messages/1/content").asString())
        .startsWith("Agent travel\nSkills:\n- book_flight: Books flights.");
  }

  @Test
  void aModelThatFailsLeavesTheDerivedSummary() throws Exception {
    server.enqueue(ScriptedReply.status(400, "{\"error\":{\"message\":\"bad request\"}}"));
    register("bill", "Bills a customer.", "remote:billing");

    writer = SummaryWriter.start(index, registry, client);
    await().atMost(Duration.ofSeconds(10)).until(() -> server.requestCount() == 1);
    writer.close();

    assertThat(summary(ServiceKind.WORKER_GROUP, "billing"))
        .isEqualTo("Remote worker group billing: Bills a customer.");
    assertThat(writer.cached()).isZero();
  }
}
