package dev.toolhost.bus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.RegistryChanges;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSpec;
import java.util.List;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

class ToolServicesTest {

  private static final String SERVICES =
      """
      [{"id": "custom-rag", "topic": "custom-rag-request",
        "config-params": [{"name": "collection", "required": true}]},
       {"id": "calculator", "request-queue": "calc-request", "response-queue": "calc-response",
        "config-params": []}]
      """;

  @Test
  void descriptorsLoadInTheSeedsShapesAndTheLaterQueueShape() {
    List<ToolServiceDescriptor> services = ToolServices.parseServices(SERVICES);
    assertThat(services.get(0).requestQueue()).isEqualTo("custom-rag-request");
    assertThat(services.get(0).configParams())
        .containsExactly(new ToolServiceDescriptor.ConfigParam("collection", true));
    assertThat(services.get(1).requestQueue()).isEqualTo("calc-request");
    assertThat(services.get(1).responseQueue()).contains("calc-response");
    ToolDescriptor tool =
        ToolServices.parseTools(
                """
                {"type": "tool-service", "name": "query-products",
                 "description": "Query the product knowledge base", "service": "custom-rag",
                 "collection": "products",
                 "arguments": [{"name": "question", "type": "string",
                                "description": "The question to ask about products"}]}
                """)
            .getFirst();
    assertThat(tool.config()).containsOnlyKeys("collection");
    assertThat(tool.parameters().toString())
        .isEqualTo(
            "{\"type\":\"object\",\"properties\":{\"question\":{\"type\":\"string\","
                + "\"description\":\"The question to ask about products\"}}}");
  }

  @Test
  void aToolOfAnUnknownServiceOrMissingARequiredParamIsRefusedAndTheOldToolsStay() {
    ToolRegistry registry = new ToolRegistry();
    ToolServices services = new ToolServices(new InMemoryBus(), registry);
    services.apply(
        ToolServices.parseServices(SERVICES),
        ToolServices.parseTools(
            "{\"name\":\"q\",\"service\":\"custom-rag\",\"collection\":\"c\",\"arguments\":[]}"));
    assertThat(registry.find("q")).isPresent();
    assertThatThrownBy(
            () ->
                services.apply(
                    ToolServices.parseServices(SERVICES),
                    ToolServices.parseTools(
                        "[{\"name\":\"bad\",\"service\":\"custom-rag\"},"
                            + "{\"name\":\"worse\",\"service\":\"nope\"}]")))
        .hasMessageContaining("tool 'bad' misses required config param 'collection'")
        .hasMessageContaining("tool 'worse' references unknown service 'nope'");
    assertThat(registry.find("q")).isPresent();
    assertThat(registry.find("bad")).isEmpty();
  }

  @Test
  void aToolServiceThatAnnouncesAChangedToolHasItReplacedInOneStep() {
    ToolRegistry registry = new ToolRegistry();
    ToolServices services = new ToolServices(new InMemoryBus(), registry);
    services.heard(announcement("Query the customer knowledge base"));
    ExecutableTool first = registry.find("query-customers").orElseThrow();
    List<String> heard = RegistryChanges.of(registry);

    services.heard(announcement("Query the customer knowledge base"));
    services.heard(announcement("Query customers, orders included"));

    assertThat(heard).containsExactly("~query-customers");
    assertThat(registry.find("query-customers").orElseThrow())
        .isNotSameAs(first)
        .extracting(tool -> tool.spec().description())
        .isEqualTo("Query customers, orders included");
  }

  @Test
  void aToolServicesToolWhoseNameIsTakenIsLoggedOnceNotOnEveryHeartbeat() {
    ToolRegistry registry = new ToolRegistry();
    registry.register(
        ExecutableTool.of(
            new ToolSpec(
                "query-customers",
                "A tool of the host's own.",
                JsonMapper.shared().createObjectNode().put("type", "object"),
                "builtin:local"),
            (call, arguments) -> ToolResult.success("local")));
    ToolServices services = new ToolServices(new InMemoryBus(), registry);

    try (LogCapture log = LogCapture.start()) {
      for (int i = 0; i < 5; i++) {
        services.heard(announcement("Query the customer knowledge base"));
      }

      assertThat(log.messages(ToolServices.class, "WARN"))
          .containsExactly(
              "Tool 'query-customers' announced by tool service 'custom-rag' is not registered:"
                  + " the name is taken by builtin:local");
    }
    assertThat(registry.find("query-customers").orElseThrow().spec().source())
        .isEqualTo("builtin:local");
  }

  private static JsonNode announcement(String description) {
    return JsonMapper.shared()
        .readTree(
            "{\"type\": \"announce\", \"worker_id\": \"w1\", \"heartbeat_ms\": 60000,"
                + " \"service\": {\"id\": \"custom-rag\", \"topic\": \"custom-rag-request\","
                + " \"config-params\": [{\"name\": \"collection\", \"required\": true}]},"
                + " \"tools\": [{\"type\": \"tool-service\", \"name\": \"query-customers\","
                + " \"description\": \""
                + description
                + "\", \"service\": \"custom-rag\", \"collection\": \"customers\","
                + " \"arguments\": []}]}");
  }
}
