package dev.toolhost.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.toolhost.core.spi.Mount;
import dev.toolhost.core.spi.Route;
import dev.toolhost.testing.StartingExtension;
import dev.toolhost.testing.TestHost;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The MCP gateway is mounted on every host at /mcp, a path no other extension may take. */
class GatewayMountTest {

  private static final Route.Handler OK = request -> Route.Answer.json("{}");

  @Test
  void everyHostMountsTheGatewayAtMcpWithoutAnMcpSection() {
    try (TestHost host = TestHost.start("{}", List.of(new McpExtension()))) {
      assertThat(host.runtime().mounts()).extracting(Mount::path).containsExactly("/mcp");
      assertThat(host.runtime().mounts().getFirst().servlet())
          .isInstanceOf(jakarta.servlet.Servlet.class);
    }
  }

  @Test
  void aRouteBelowTheGatewaysPathIsRefusedNamingItsExtension() {
    StartingExtension squatter =
        new StartingExtension("squatter", host -> host.route(new Route("GET", "/mcp/x", OK)));

    assertThatThrownBy(() -> TestHost.start("{}", List.of(new McpExtension(), squatter)))
        .hasMessageContaining("'squatter' adds the route GET /mcp/x");
  }

  @Test
  void aSecondServletAtOrAboveTheGatewaysPathIsRefused() {
    StartingExtension above =
        new StartingExtension("above", host -> host.mount(new Mount("/mcp", "x", new Object())));

    assertThatThrownBy(() -> TestHost.start("{}", List.of(new McpExtension(), above)))
        .hasMessageContaining("'above' mounts a servlet at /mcp");
  }
}
