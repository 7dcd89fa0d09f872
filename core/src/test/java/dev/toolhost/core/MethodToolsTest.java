package dev.toolhost.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

class MethodToolsTest {

  enum Priority {
    LOW,
    HIGH
  }

  record Item(
      @Param(description = "What to buy.") String name, int quantity, Optional<String> note) {}

  record Order(String id, List<Item> items, Priority priority) {}

  static class Shop {
    @Tool(description = "Places an order.")
    public Order placeOrder(
        @Param(description = "The customer placing it.") String customer,
        List<Item> items,
        Priority priority,
        Optional<Integer> discountPercent,
        ToolCall call) {
      return new Order(
          call.callId() + "-" + customer + "-" + discountPercent.orElse(0), items, priority);
    }

    @Tool(
        name = "greet",
        description = "Greets someone.",
        readOnly = true,
        destructive = false,
        inline = true)
    public String hello(String name) {
      return "Hello, " + name + "!";
    }

    @Tool(description = "Always refuses.", timeoutSeconds = 90)
    public String refuse(String reason) {
      throw ToolException.invalidArguments("refused because " + reason);
    }

    public String notATool() {
      return "";
    }
  }

  private final ToolDispatcher dispatcher = ToolDispatcher.create();

  private ToolSet shop() {
    ToolRegistry registry = new ToolRegistry();
    registry.registerAll(MethodTools.of(new Shop(), "builtin:shop"));
    return ToolSet.of(registry, ToolProfiles.MAIN);
  }

  @Test
  void annotatedMethodsBecomeToolsSortedByName() {
    List<ExecutableTool> tools = MethodTools.of(new Shop(), "builtin:shop");

    assertThat(tools)
        .extracting(ExecutableTool::name)
        .containsExactly("greet", "placeOrder", "refuse");
    assertThat(tools)
        .allSatisfy(tool -> assertThat(tool.spec().source()).isEqualTo("builtin:shop"));
    assertThat(tools.getFirst().spec().annotations())
        .isEqualTo(new ToolAnnotations(true, false, false, true));
    assertThat(tools).extracting(ExecutableTool::inline).containsExactly(true, false, false);
  }

  @Test
  void aToolNamesItsOwnTimeoutOrGetsTheDefault() {
    List<ExecutableTool> tools = MethodTools.of(new Shop(), "builtin:shop");

    assertThat(tools)
        .extracting(ExecutableTool::timeout)
        .containsExactly(Optional.empty(), Optional.empty(), Optional.of(Duration.ofSeconds(90)));
    assertThat(tools)
        .extracting(ExecutableTool::defaultTimeout)
        .containsExactly(
            ToolCall.DEFAULT_TIMEOUT, ToolCall.DEFAULT_TIMEOUT, Duration.ofSeconds(90));
    // Running inline keeps the timeout, and the timeout keeps running inline.
    assertThat(tools.getLast().runInline().timeout()).hasValue(Duration.ofSeconds(90));
    assertThat(tools.getFirst().withTimeout(Duration.ofSeconds(5)).inline()).isTrue();
  }

  static class NegativeTimeout {
    @Tool(description = "Never finishes in time.", timeoutSeconds = -1)
    public String late() {
      return "";
    }
  }

  @Test
  void aTimeoutThatIsNotPositiveIsRefusedNamingTheMethod() {
    assertThatThrownBy(() -> MethodTools.of(new NegativeTimeout(), "builtin:test"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("NegativeTimeout.late")
        .hasMessageContaining("timeoutSeconds = -1");
    ExecutableTool tool = MethodTools.of(new Shop(), "builtin:shop").getFirst();
    assertThatThrownBy(() -> tool.withTimeout(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("Tool 'greet' has a timeout of PT0S; it must be positive.");
  }

  @Test
  void schemaIsGeneratedFromRecordsEnumsListsAndOptionals() {
    JsonNode schema = MethodTools.of(new Shop(), "builtin:shop").get(1).spec().parameters();

    assertThat(schema.get("type").asString()).isEqualTo("object");
    assertThat(schema.get("required").valueStream().map(JsonNode::asString))
        .containsExactly("customer", "items", "priority");
    JsonNode properties = schema.get("properties");
    assertThat(properties.get("customer").get("type").asString()).isEqualTo("string");
    assertThat(properties.get("customer").get("description").asString())
        .isEqualTo("The customer placing it.");
    assertThat(properties.get("priority").get("enum").valueStream().map(JsonNode::asString))
        .containsExactly("LOW", "HIGH");
    assertThat(properties.get("discountPercent").get("type").asString()).isEqualTo("integer");
    assertThat(properties.has("call")).isFalse();
    JsonNode item = properties.get("items").get("items");
    assertThat(properties.get("items").get("type").asString()).isEqualTo("array");
    assertThat(item.get("properties").get("name").get("description").asString())
        .isEqualTo("What to buy.");
    assertThat(item.get("required").valueStream().map(JsonNode::asString))
        .containsExactlyInAnyOrder("name", "quantity");
  }

  @Test
  void returnedRecordIsJsonWithStructuredContent() {
    ToolResult result =
        dispatcher.dispatch(
            shop(),
            ToolCall.of(
                    "placeOrder",
                    """
                    {"customer": "ada", "priority": "HIGH",
                     "items": [{"name": "tea", "quantity": 2}], "discountPercent": 10}
                    """)
                .withCallId("c1"));

    assertThat(result).isInstanceOf(ToolResult.Success.class);
    ToolResult.Success success = (ToolResult.Success) result;
    JsonNode json = JsonMapper.shared().readTree(success.content());
    assertThat(json.get("id").asString()).isEqualTo("c1-ada-10");
    assertThat(json.get("items").get(0).get("name").asString()).isEqualTo("tea");
    assertThat(success.structured()).contains(json);
  }

  @Test
  void absentOptionalParameterArrivesEmpty() {
    ToolResult result =
        dispatcher.dispatch(
            shop(),
            ToolCall.of(
                    "placeOrder", "{\"customer\": \"bo\", \"priority\": \"LOW\", \"items\": []}")
                .withCallId("c2"));

    assertThat(result.text()).contains("\"id\":\"c2-bo-0\"");
  }

  @Test
  void misspeltArgumentIsReportedNotIgnored() {
    ToolResult result = dispatcher.dispatch(shop(), ToolCall.of("greet", "{\"nmae\": \"Ada\"}"));

    assertThat(result.isError()).isTrue();
    assertThat(result.text())
        .contains("required property 'name' not found")
        .contains("property 'nmae' is not defined in the schema");
  }

  @Test
  void returnedStringIsTheContent() {
    ToolResult result = dispatcher.dispatch(shop(), ToolCall.of("greet", "{\"name\": \"Ada\"}"));

    assertThat(result).isEqualTo(ToolResult.success("Hello, Ada!"));
  }

  @Test
  void enumValueOutsideTheSchemaIsRefusedBeforeTheMethodRuns() {
    ToolResult result =
        dispatcher.dispatch(
            shop(),
            ToolCall.of(
                "placeOrder", "{\"customer\": \"bo\", \"priority\": \"URGENT\", \"items\": []}"));

    assertThat(result).isInstanceOf(ToolResult.Failure.class);
    assertThat(((ToolResult.Failure) result).error().code()).isEqualTo(ErrorCode.INVALID_ARGUMENTS);
    assertThat(result.text()).contains("$.priority");
  }

  @Test
  void toolExceptionFromTheMethodIsItsErrorWithItsMessage() {
    ToolResult result = dispatcher.dispatch(shop(), ToolCall.of("refuse", "{\"reason\": \"no\"}"));

    assertThat(((ToolResult.Failure) result).error().code()).isEqualTo(ErrorCode.INVALID_ARGUMENTS);
    assertThat(result.text()).contains("refused because no").doesNotContain("Exception");
  }

  @Test
  void objectWithoutToolMethodsIsRefused() {
    assertThatThrownBy(() -> MethodTools.of(new Object(), "builtin:none"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("java.lang.Object has no public method annotated with @Tool");
  }
}
