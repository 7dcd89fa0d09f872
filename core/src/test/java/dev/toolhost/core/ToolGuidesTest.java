package dev.toolhost.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class ToolGuidesTest {

  private final ToolGuides guides = new ToolGuides();
  private final ToolRegistry registry = new ToolRegistry();
  private final ToolDispatcher dispatcher = ToolDispatcher.create();

  ToolGuidesTest() {
    guides.add(new ToolGuide("web-tools", "Searching and browsing the web.", "# Web tools\n..."));
    registry.registerAll(guides.tools());
  }

  private ToolResult call(String tool, String arguments) {
    return dispatcher.dispatch(
        ToolSet.of(registry, ToolProfiles.MAIN), ToolCall.of(tool, arguments));
  }

  @Test
  void guideToolsAreReadOnlyBuiltIns() {
    assertThat(registry.specs())
        .extracting(ToolSpec::name, ToolSpec::source)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("get_tool_guide", "builtin:guides"),
            org.assertj.core.groups.Tuple.tuple("list_tool_guides", "builtin:guides"));
    assertThat(registry.specs())
        .allSatisfy(spec -> assertThat(spec.annotations().readOnly()).isTrue());
  }

  @Test
  void listingNamesEveryGuideWithItsSummary() {
    assertThat(call("list_tool_guides", "{}").text())
        .isEqualTo(
            "Available tool guides:\n"
                + "- tool-calls: How tool calls fail (error codes, retries, deadlines) and how to"
                + " find tools.\n"
                + "- web-tools: Searching and browsing the web.");
  }

  @Test
  void guideIsReturnedWhole() {
    assertThat(call("get_tool_guide", "{\"name\": \"web-tools\"}").text())
        .isEqualTo("# Web tools\n...");
    assertThat(call("get_tool_guide", "{\"name\": \"tool-calls\"}").text())
        .startsWith("# Tool calls")
        .contains("`invalid_arguments`", "`timeout`", "`unavailable`");
  }

  @Test
  void unknownGuideIsAnErrorListingTheAvailableOnes() {
    ToolResult result = call("get_tool_guide", "{\"name\": \"mcp\"}");

    assertThat(result.isError()).isTrue();
    assertThat(result.text())
        .contains("there is no tool guide named 'mcp'. Available guides: tool-calls, web-tools.");
  }

  @Test
  void guideNamesAreUnique() {
    assertThatThrownBy(() -> guides.add(new ToolGuide("web-tools", "again", "")))
        .hasMessage("Tool guide 'web-tools' is already published.");
  }

  @Test
  void aShelfThatFailsIsReportedWithoutItsMessageWhichMayNameTheDatabase() {
    guides.shelve(
        new SavedGuides() {
          @Override
          public java.util.List<ToolGuide> list(ToolCall call) {
            throw new IllegalStateException(
                "long-term memory's database failed (jdbc:postgresql://db/x?password=hunter2)");
          }

          @Override
          public java.util.Optional<ToolGuide> find(ToolCall call, String name) {
            return java.util.Optional.empty();
          }
        });

    String listing = call("list_tool_guides", "{}").text();

    assertThat(listing)
        .contains("- web-tools: Searching and browsing the web.")
        .contains("saved guides cannot be listed now")
        .doesNotContain("jdbc", "hunter2");
  }
}
