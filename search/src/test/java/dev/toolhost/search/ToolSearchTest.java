package dev.toolhost.search;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfile;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.ToolSpec;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

@Timeout(30)
class ToolSearchTest {

  private final ToolRegistry registry = new ToolRegistry();
  private final ToolDispatcher dispatcher = ToolDispatcher.create();
  private final ToolSearch search = ToolSearch.over(registry);

  /** A small stable set: only the guides. */
  private final ToolProfile starter = ToolProfile.none("starter").withSources("builtin:guides");

  @AfterEach
  void close() {
    search.close();
  }

  private void register(String name, String description, String source) {
    ObjectNode schema = (ObjectNode) JsonMapper.shared().readTree("{\"type\": \"object\"}");
    registry.register(
        new ToolSpec(name, description, schema, source),
        (c, a) -> ToolResult.success(name + " ran"));
  }

  private void registerCatalogue() {
    register("list_tool_guides", "Lists the tool guides.", "builtin:guides");
    register("read_pdf", "Reads the text of a PDF file.", "builtin:files");
    register("pdf_to_images", "Renders each page of a PDF file as an image.", "builtin:files");
    register("write_file", "Writes a text file.", "builtin:files");
    register("web_search", "Searches the web.", "builtin:web");
    register("shell_exec", "Runs a shell command; can read any file.", "builtin:shell");
    for (int i = 0; i < 100; i++) {
      register("metric_" + i, "Reports metric number " + i + " of the fleet.", "mcp:metrics");
    }
  }

  private ToolResult call(ToolSet set, String tool, String arguments) {
    return dispatcher.dispatch(set, ToolCall.of(tool, arguments));
  }

  /**
   * The starter set bound to find the catalogue's tools under the main profile, one a search, after
   * that search.
   */
  private ToolSet searched(String query) {
    registerCatalogue();
    ToolSet set = ToolSet.of(registry, starter);
    search.bind(set, ToolProfiles.MAIN, 1);
    call(set, "search_tools", "{\"query\": \"" + query + "\"}");
    return set;
  }

  @Test
  void searchToolsAddsTheBestAllowedToolsAfterTheExistingOnes() {
    registerCatalogue();
    ToolSet set = ToolSet.of(registry, starter);
    search.bind(set, ToolProfiles.MAIN.withoutSources("builtin:shell"), 2);

    assertThat(set.names()).containsExactly("list_tool_guides", "search_tools");
    ToolResult result = call(set, "search_tools", "{\"query\": \"read a pdf file\"}");

    assertThat(result.text())
        .isEqualTo(
            """
            Added to your tools for the rest of this run (call them directly):
            - read_pdf: Reads the text of a PDF file.
            - pdf_to_images: Renders each page of a PDF file as an image.""");
    assertThat(set.names())
        .containsExactly("list_tool_guides", "search_tools", "read_pdf", "pdf_to_images");
    assertThat(call(set, "read_pdf", "{}").text()).isEqualTo("read_pdf ran");
  }

  @Test
  void toolsTheProfileDeniesAreNeverFound() {
    registerCatalogue();
    ToolSet set = ToolSet.of(registry, starter);
    search.bind(set, ToolProfiles.MAIN.withoutSources("builtin:shell"));

    call(set, "search_tools", "{\"query\": \"shell command\"}");

    assertThat(set.find("shell_exec")).isEmpty();
    assertThat(search.search("shell command", ToolProfiles.MAIN, 5))
        .extracting(ToolSpec::name)
        .containsExactly("shell_exec");
  }

  @Test
  void searchingAgainReportsToolsAlreadyPresentAndAddsNothingTwice() {
    ToolSet set = searched("pdf text");

    ToolResult again = call(set, "search_tools", "{\"query\": \"pdf text\"}");
    ToolResult guides = call(set, "search_tools", "{\"query\": \"tool guides\"}");

    assertThat(again.text())
        .isEqualTo("Already among your tools:\n- read_pdf: Reads the text of a PDF file.");
    assertThat(guides.text()).startsWith("Already among your tools:\n- list_tool_guides");
    assertThat(set.names()).containsExactly("list_tool_guides", "search_tools", "read_pdf");
  }

  @Test
  void aFoundToolKeepsWhereItRunsAndItsTimeout() {
    ObjectNode schema = (ObjectNode) JsonMapper.shared().readTree("{\"type\": \"object\"}");
    registry.register(
        ExecutableTool.of(
                new ToolSpec("render_video", "Renders a video.", schema, "builtin:media"),
                (c, a) -> ToolResult.success("rendered"))
            .runInline()
            .withTimeout(Duration.ofMinutes(10)));
    ToolSet set = ToolSet.of(registry, starter);
    search.bind(set, ToolProfiles.MAIN, 1);

    call(set, "search_tools", "{\"query\": \"render a video\"}");

    ExecutableTool found = set.find("render_video").orElseThrow().tool();
    assertThat(found.inline()).isTrue();
    assertThat(found.timeout()).hasValue(Duration.ofMinutes(10));
    assertThat(call(set, "render_video", "{}").text()).isEqualTo("rendered");
  }

  @Test
  void aFoundToolThatIsUnregisteredCanNoLongerBeCalled() {
    ToolSet set = searched("web");

    registry.unregister("web_search");
    ToolResult result = call(set, "web_search", "{}");

    assertThat(result.isError()).isTrue();
    assertThat(((ToolResult.Failure) result).error().code()).isEqualTo(ErrorCode.TOOL_NOT_FOUND);
    assertThat(search.search("web", ToolProfiles.MAIN, 5)).isEmpty();
  }

  @Test
  void toolsRegisteredLaterAreFoundAndNoMatchSaysSo() {
    ToolSet set = ToolSet.of(registry, starter);
    search.bind(set, ToolProfiles.MAIN);

    assertThat(call(set, "search_tools", "{\"query\": \"translate\"}").text())
        .startsWith("No tool matches 'translate'.");
    register("translate_text", "Translates text between languages.", "mcp:deepl");
    assertThat(call(set, "search_tools", "{\"query\": \"translate\"}").text())
        .contains("- translate_text: Translates text between languages.");
    assertThat(call(set, "search_tools", "{\"query\": \" \"}").isError()).isTrue();
  }
}
