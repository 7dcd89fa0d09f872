package dev.toolhost.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ToolResult;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** A result's images reach an MCP client as image content after its text. */
class McpResultsImageTest {

  @Test
  void anImageBesideTheTextBecomesImageContent() {
    ToolResult.Success shot =
        new ToolResult.Success("Saved to /shots/a.png", Optional.empty())
            .withImages(List.of(new ToolResult.Image("image/png", "iVBORw0KGgo=")));
    McpSchema.CallToolResult result = McpResults.toCallToolResult(shot);
    assertThat(result.content()).hasSize(2);
    assertThat(((McpSchema.TextContent) result.content().get(0)).text())
        .isEqualTo("Saved to /shots/a.png");
    McpSchema.ImageContent image = (McpSchema.ImageContent) result.content().get(1);
    assertThat(image.data()).isEqualTo("iVBORw0KGgo=");
    assertThat(image.mimeType()).isEqualTo("image/png");
  }

  @Test
  void aResultWithoutImagesIsTextAlone() {
    List<McpSchema.Content> content =
        McpResults.toCallToolResult(ToolResult.success("plain")).content();
    assertThat(content).hasSize(1);
    assertThat(((McpSchema.TextContent) content.get(0)).text()).isEqualTo("plain");
  }
}
