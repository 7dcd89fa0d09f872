package dev.toolhost.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ToolSpecTest {

  @ParameterizedTest
  @ValueSource(strings = {"", "has space", "slash/name", "ünïcode", "semi;colon", "tab\tname"})
  void nameOutsideTheMcpRuleIsRefusedNamingTheTool(String name) {
    assertThatThrownBy(() -> Schemas.spec(name, "builtin:test"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("Tool name '" + name + "' is invalid");
  }

  @Test
  void nameOfOneHundredTwentyNineCharactersIsRefused() {
    assertThatThrownBy(() -> Schemas.spec("x".repeat(129), "builtin:test"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("1 to 128 characters");
  }

  @ParameterizedTest
  @ValueSource(strings = {"a", "web_search", "mcp.weather-get_forecast", "A-1.b_2"})
  void namesOfTheMcpRuleAreAccepted(String name) {
    assertThat(Schemas.spec(name, "builtin:test").name()).isEqualTo(name);
    assertThat(Schemas.spec("y".repeat(128), "builtin:test").name()).hasSize(128);
  }

  @Test
  void openAiFormWrapsNameDescriptionAndParameters() {
    ToolSpec spec = new ToolSpec("add", "Adds.", Schemas.twoIntegers(), "builtin:math");

    assertThat(spec.toOpenAiFunction().toString())
        .isEqualTo(
            "{\"type\":\"function\",\"function\":{\"name\":\"add\",\"description\":\"Adds.\","
                + "\"parameters\":"
                + Schemas.twoIntegers()
                + "}}");
  }

  @Test
  void specCannotBeChangedThroughItsParameters() {
    ToolSpec spec = new ToolSpec("add", "Adds.", Schemas.twoIntegers(), "builtin:math");

    spec.parameters().put("type", "string");

    assertThat(spec.parameters()).isEqualTo(Schemas.twoIntegers());
  }

  @Test
  void errorCodesHaveTheirWireNamesAndRetryability() {
    assertThat(ErrorCode.values())
        .extracting(ErrorCode::wireName)
        .containsExactly(
            "tool_not_found",
            "invalid_arguments",
            "execution_failed",
            "timeout",
            "cancelled",
            "unavailable");
    assertThat(ErrorCode.values())
        .filteredOn(ErrorCode::retryable)
        .containsExactly(ErrorCode.TIMEOUT, ErrorCode.UNAVAILABLE);
    assertThat(ErrorCode.fromWireName("timeout")).isEqualTo(ErrorCode.TIMEOUT);
    assertThatThrownBy(() -> ErrorCode.fromWireName("boom"))
        .hasMessageContaining("Unknown tool error code 'boom'");
  }
}
