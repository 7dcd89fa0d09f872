package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.bus.InMemoryBus;
import dev.toolhost.bus.MessageBus;
import dev.toolhost.bus.ToolService;
import dev.toolhost.bus.ToolServices;
import dev.toolhost.bus.ToolServicesConfig;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.host.HostConfig;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

@Timeout(30)
class ToolServicesConfigTest {

  static final String SECTION =
      """
      http:
        port: 0
      tool_services:
        services:
          custom-rag:
            topic: custom-rag-request
            config-params:
              - {name: collection, required: true}
        tools:
          query-customers:
            type: tool-service
            description: Query the customer knowledge base
            service: custom-rag
            collection: customers
            arguments:
              - {name: question, type: string, description: The question to ask about customers}
      """;

  static final String PRODUCTS =
      """
      {
        "tool-service": {
          "calculator": {"id": "calculator", "request-queue": "calc-request",
                         "response-queue": "calc-response", "config-params": []}
        },
        "tool": {
          "query-products": {
            "type": "tool-service",
            "name": "query-products",
            "description": "Query the product knowledge base",
            "service": "custom-rag",
            "collection": "products",
            "arguments": [{"name": "question", "type": "string",
                           "description": "The question to ask about products"}]
          }
        }
      }
      """;

  @TempDir Path directory;

  @Test
  void servicesToolsAndDescriptorFilesAreReadInTheDocumentsShapes() throws Exception {
    Files.createDirectories(directory.resolve("descriptors"));
    Files.writeString(directory.resolve("descriptors/products.json"), PRODUCTS);
    Path config = directory.resolve("toolhost.yaml");
    Files.writeString(config, SECTION + "  files: [descriptors]\n");

    ToolServicesConfig read = Sections.toolServices(config);

    assertThat(read.services())
        .extracting(service -> service.id() + " " + service.requestQueue())
        .containsExactly("custom-rag custom-rag-request", "calculator calc-request");
    assertThat(read.services().get(1).responseQueue()).hasValue("calc-response");
    assertThat(read.tools())
        .extracting(tool -> tool.name() + " " + tool.config().get("collection").asString())
        .containsExactly("query-customers customers", "query-products products");
    assertThat(HostConfig.load(config).http().port()).isZero();
  }

  @Test
  void aToolOfAnUnknownServiceIsRefusedNamingTheFileAndLine() {
    String yaml = SECTION.replace("service: custom-rag", "service: custom-rug");

    assertThatThrownBy(() -> Sections.toolServices(yaml, "toolhost.yaml", directory))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "toolhost.yaml line 10, column 5: tool 'query-customers' references unknown service"
                + " 'custom-rug' (known: custom-rag)");
  }

  @Test
  void anUnknownKeyAndAMissingRequiredParamAreRefusedWithTheirLines() {
    String yaml = SECTION.replace("  tools:\n", "  tool:\n");

    assertThatThrownBy(() -> Sections.toolServices(yaml, "toolhost.yaml", directory))
        .isInstanceOf(ConfigException.class)
        .hasMessage(
            "toolhost.yaml line 9, column 3: unknown key 'tool' under 'tool_services' (did you mean"
                + " 'tools'? expected"
                + " one of: files, services, tools)");
    String missing = SECTION.replace("      collection: customers\n", "");
    assertThatThrownBy(() -> Sections.toolServices(missing, "toolhost.yaml", directory))
        .hasMessage(
            "toolhost.yaml line 10, column 5: tool 'query-customers' misses required config param"
                + " 'collection' of service 'custom-rag'");
  }

  @Test
  void aBadDescriptorFileIsNamedWithItsLine() throws Exception {
    Path bad = directory.resolve("bad.json");
    Files.writeString(
        bad, "{\n  \"tool\": [\n    {\"type\": \"tool-service\", \"service\": \"x\"}\n  ]\n}\n");
    Path broken = directory.resolve("broken.json");
    Files.writeString(broken, "{\n  \"id\": \"calc\",\n  \"topic\": \n}\n");

    assertThatThrownBy(
            () ->
                Sections.toolServices(
                    SECTION + "  files: [bad.json, broken.json, gone.json]\n",
                    "toolhost.yaml",
                    directory))
        .isInstanceOf(ConfigException.class)
        .hasMessageContaining(bad + " line 3, column 5: a tool descriptor has no 'name'")
        .hasMessageContaining(broken + " line 4, column 1: not valid JSON")
        .hasMessageContaining(
            "toolhost.yaml line 17, column 34: 'tool_services.files[2]' is 'gone.json' (expected a"
                + " JSON file or a directory of them; there is none at "
                + directory.resolve("gone.json")
                + ")");
  }

  @Test
  void toolServiceProblemsAreReportedWithTheProblemsOfEveryOtherSection() throws Exception {
    Files.writeString(
        directory.resolve("bad.json"),
        "{\n  \"tool\": [\n    {\"type\": \"tool-service\", \"service\": \"x\"}\n  ]\n}\n");
    Path config = directory.resolve("toolhost.yaml");
    Files.writeString(
        config,
        """
        http:
          port: -1
        memory:
          store: postgres
        tool_services:
          tool: {}
          services:
            custom-rag: {topic: custom-rag-request}
          tools:
            query-customers:
              type: tool-service
              description: Query the customer knowledge base
              service: custom-rug
          files: [bad.json, gone.json, 7]
        agents:
          helper:
            model: small
            profile: writers
        """);
    String gone = directory.resolve("gone.json").toString();
    String expected =
        """
        %1$s line 2, column 9: 'http.port' is -1, out of range (expected 0 to 65535; 0 picks a free port)
        %1$s line 4, column 10: 'memory.store' is 'postgres' (expected one of: memory, redis)
        %1$s line 6, column 3: unknown key 'tool' under 'tool_services' (did you mean 'tools'? expected one of: files, services, tools)
        %2$s line 3, column 5: a tool descriptor has no 'name'
        %1$s line 14, column 21: 'tool_services.files[1]' is 'gone.json' (expected a JSON file or a directory of them; there is none at %3$s)
        %1$s line 14, column 32: wrong type for 'tool_services.files[2]': expected a path to a JSON file or a directory, got the number 7
        %1$s line 10, column 5: tool 'query-customers' references unknown service 'custom-rug' (known: custom-rag)
        %1$s line 18, column 14: agent 'helper' names an unknown profile 'writers' (known profiles: main, subagent, scheduled, a2a_synthesis)\
        """
            .formatted(config, directory.resolve("bad.json"), gone);

    assertThatThrownBy(() -> HostConfig.load(config))
        .isInstanceOf(ConfigException.class)
        .hasMessage(expected);
    assertThatThrownBy(() -> Sections.toolServices(config))
        .isInstanceOf(ConfigException.class)
        .hasMessage(expected);
  }

  @Test
  void theHostConfigAcceptsTheSection() {
    assertThat(HostConfig.parse(SECTION, "toolhost.yaml").http().port()).isZero();
  }

  @Test
  void aBadReloadKeepsThePreviousTools() {
    ToolRegistry registry = new ToolRegistry();
    try (InMemoryBus bus = new InMemoryBus()) {
      ToolServices services = new ToolServices(bus, registry);
      Sections.toolServices(SECTION, "toolhost.yaml", directory).applyTo(services);
      assertThat(registry.find("query-customers")).isPresent();

      String renamed = SECTION.replace("query-customers", "query-clients");
      registry.register(
          new dev.toolhost.core.ToolSpec(
              "query-clients",
              "Taken.",
              JsonMapper.shared().createObjectNode().put("type", "object"),
              "builtin:test"),
          (call, arguments) -> dev.toolhost.core.ToolResult.success("mine"));
      ToolServicesConfig taken = Sections.toolServices(renamed, "toolhost.yaml", directory);
      assertThatThrownBy(() -> taken.applyTo(services))
          .isInstanceOf(ConfigException.class)
          .hasMessage("tool_services: tool 'query-clients' is already registered by builtin:test");
      assertThatThrownBy(
              () ->
                  Sections.toolServices(
                      SECTION.replace("service: custom-rag", "service: nope"),
                      "toolhost.yaml",
                      directory))
          .isInstanceOf(ConfigException.class);

      assertThat(registry.find("query-customers").orElseThrow().spec().source())
          .isEqualTo("service:custom-rag");
    }
  }

  @Test
  void aHostServesAConfiguredToolServiceOverTheInMemoryBusThroughTheHttpApi() throws Exception {
    ToolServicesConfig config = Sections.toolServices(SECTION, "toolhost.yaml", directory);
    try (InMemoryBus bus = new InMemoryBus();
        Host host =
            Host.builder(HostConfig.parse(SECTION, "toolhost.yaml"))
                .environment(Map.of())
                .service(MessageBus.class, bus)
                .build();
        ToolService rag =
            new ToolService(bus, config.services().getFirst(), List.of()) {
              @Override
              protected Object invoke(Request request) {
                request.emit("In " + request.config("collection").asString() + ", ");
                return request.user().isEmpty() ? "for nobody" : "for " + request.user();
              }
            }.start();
        HttpClient client = HttpClient.newHttpClient()) {
      URI base = host.start();

      HttpResponse<String> listed =
          client.send(
              HttpRequest.newBuilder(base.resolve("/v1/tools"))
                  .timeout(Duration.ofSeconds(10))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      JsonNode tools = JsonMapper.shared().readTree(listed.body()).get("tools");
      JsonNode customers = null;
      for (JsonNode tool : tools) {
        if (tool.at("/function/name").asString().equals("query-customers")) {
          customers = tool;
        }
      }
      assertThat(customers).isNotNull();
      assertThat(customers.get("source").asString()).isEqualTo("service:custom-rag");
      assertThat(customers.at("/function/parameters/properties/question/type").asString())
          .isEqualTo("string");

      HttpResponse<String> invoked =
          client.send(
              HttpRequest.newBuilder(base.resolve("/v1/tools/query-customers/invoke"))
                  .timeout(Duration.ofSeconds(10))
                  .header("content-type", "application/json")
                  .POST(
                      HttpRequest.BodyPublishers.ofString(
                          "{\"arguments\": {\"question\": \"complaints?\"}}"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(invoked.statusCode()).as(invoked.body()).isEqualTo(200);
      JsonNode body = JsonMapper.shared().readTree(invoked.body());
      assertThat(body.get("is_error").asBoolean()).as(invoked.body()).isFalse();
      assertThat(body.get("content").asString()).startsWith("In customers, for ");
    }
  }
}
