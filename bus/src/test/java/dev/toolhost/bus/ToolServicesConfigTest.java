package dev.toolhost.bus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.core.spi.ConfigException;
import dev.toolhost.host.HostConfig;
import dev.toolhost.testing.TestHost;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.assertj.core.api.AbstractThrowableAssert;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.json.JsonMapper;

/**
 * The {@code tool_services:} section and the descriptor files it names, read and refused with the
 * tool services extension alone, as {@code toolhost config check} reads them; a host of it serves
 * the configured tool over the bus it is given.
 */
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

  /** The host config of that text, read with the tool services extension alone. */
  private HostConfig parse(String yaml) {
    return TestHost.config(yaml, List.of(new ToolServicesExtension()), directory);
  }

  /** The tool services of config text, as the extension reads them when it starts. */
  private ToolServicesConfig toolServices(String yaml) {
    return parse(yaml).read(new ToolServicesExtension()).orElseGet(ToolServicesConfig::none);
  }

  /** Asserts that the config text is refused, and gives the refusal to check its message. */
  private AbstractThrowableAssert<?, ? extends Throwable> refused(String yaml) {
    return assertThatThrownBy(() -> toolServices(yaml)).isInstanceOf(ConfigException.class);
  }

  @Test
  void servicesToolsAndDescriptorFilesAreReadInTheDocumentsShapes() throws Exception {
    Files.createDirectories(directory.resolve("descriptors"));
    Files.writeString(directory.resolve("descriptors/products.json"), PRODUCTS);
    String config = SECTION + "  files: [descriptors]\n";

    ToolServicesConfig read = toolServices(config);

    assertThat(read.services())
        .extracting(service -> service.id() + " " + service.requestQueue())
        .containsExactly("custom-rag custom-rag-request", "calculator calc-request");
    assertThat(read.services().get(1).responseQueue()).hasValue("calc-response");
    assertThat(read.tools())
        .extracting(tool -> tool.name() + " " + tool.config().get("collection").asString())
        .containsExactly("query-customers customers", "query-products products");
    assertThat(parse(config).http().port()).isZero();
  }

  @Test
  void aToolOfAnUnknownServiceIsRefusedNamingTheFileAndLine() {
    String yaml = SECTION.replace("service: custom-rag", "service: custom-rug");

    refused(yaml)
        .hasMessage(
            "toolhost.yaml line 10, column 5: tool 'query-customers' references unknown service"
                + " 'custom-rug' (known: custom-rag)");
  }

  @Test
  void anUnknownKeyAndAMissingRequiredParamAreRefusedWithTheirLines() {
    String yaml = SECTION.replace("  tools:\n", "  tool:\n");

    refused(yaml)
        .hasMessage(
            "toolhost.yaml line 9, column 3: unknown key 'tool' under 'tool_services' (did you mean"
                + " 'tools'? expected"
                + " one of: files, services, tools)");
    String missing = SECTION.replace("      collection: customers\n", "");
    refused(missing)
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

    refused(SECTION + "  files: [bad.json, broken.json, gone.json]\n")
        .hasMessageContaining(bad + " line 3, column 5: a tool descriptor has no 'name'")
        .hasMessageContaining(broken + " line 4, column 1: not valid JSON")
        .hasMessageContaining(
            "toolhost.yaml line 17, column 34: 'tool_services.files[2]' is 'gone.json' (expected a"
                + " JSON file or a directory of them; there is none at "
                + directory.resolve("gone.json")
                + ")");
  }

  @Test
  void theHostConfigAcceptsTheSection() {
    assertThat(parse(SECTION).http().port()).isZero();
  }

  @Test
  void aBadReloadKeepsThePreviousTools() {
    ToolRegistry registry = new ToolRegistry();
    try (InMemoryBus bus = new InMemoryBus()) {
      ToolServices services = new ToolServices(bus, registry);
      toolServices(SECTION).applyTo(services);
      assertThat(registry.find("query-customers")).isPresent();

      String renamed = SECTION.replace("query-customers", "query-clients");
      registry.register(
          new ToolSpec(
              "query-clients",
              "Taken.",
              JsonMapper.shared().createObjectNode().put("type", "object"),
              "builtin:test"),
          (call, arguments) -> ToolResult.success("mine"));
      ToolServicesConfig taken = toolServices(renamed);
      assertThatThrownBy(() -> taken.applyTo(services))
          .isInstanceOf(ConfigException.class)
          .hasMessage("tool_services: tool 'query-clients' is already registered by builtin:test");
      refused(SECTION.replace("service: custom-rag", "service: nope"));

      assertThat(registry.find("query-customers").orElseThrow().spec().source())
          .isEqualTo("service:custom-rag");
    }
  }

  @Test
  void aHostServesAConfiguredToolServiceOverTheInMemoryBus() {
    ToolServicesConfig config = toolServices(SECTION);
    try (InMemoryBus bus = new InMemoryBus();
        TestHost host =
            TestHost.builder()
                .config(SECTION)
                .directory(directory)
                .extensions(List.of(new ToolServicesExtension()))
                .service(MessageBus.class, bus)
                .start();
        ToolService rag =
            new ToolService(bus, config.services().getFirst(), List.of()) {
              @Override
              protected Object invoke(Request request) {
                request.emit("In " + request.config("collection").asString() + ", ");
                return request.user().isEmpty() ? "for nobody" : "for " + request.user();
              }
            }.start()) {
      ToolSpec customers =
          host.runtime().toolSet("main").specs().stream()
              .filter(spec -> spec.name().equals("query-customers"))
              .findFirst()
              .orElseThrow();
      assertThat(customers.source()).isEqualTo("service:custom-rag");
      assertThat(customers.parameters().at("/properties/question/type").asString())
          .isEqualTo("string");

      ToolResult invoked = host.call("query-customers", "{\"question\": \"complaints?\"}");

      assertThat(invoked.isError()).as(invoked.text()).isFalse();
      assertThat(invoked.text()).startsWith("In customers, for ");
    }
  }
}
