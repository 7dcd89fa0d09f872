package dev.toolhost.core.spi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** A mounted servlet's paths, and their names in telemetry. */
class MountTest {

  private final Mount mount = new Mount("/mcp", "profile", new Object());

  @Test
  void aMountCoversItsPathAndEverythingBelowItOnly() {
    assertThat(mount.covers("/mcp")).isTrue();
    assertThat(mount.covers("/mcp/main")).isTrue();
    assertThat(mount.covers("/mcp/a/b")).isTrue();
    assertThat(mount.covers("/mcpx")).isFalse();
    assertThat(mount.covers("/v1/mcp")).isFalse();
  }

  @Test
  void telemetryNamesThePathAndTheOneSegmentBelowIt() {
    assertThat(mount.routeName("/mcp")).contains("/mcp");
    assertThat(mount.routeName("/mcp/subagent")).contains("/mcp/{profile}");
    assertThat(mount.routeName("/mcp/a/b")).isEmpty();
    assertThat(mount.routeName("/mcp/")).isEmpty();
    assertThat(mount.routeName("/mcpx")).isEmpty();
  }

  @Test
  void aPathWithATemplateOrATrailingSlashIsRefused() {
    assertThatThrownBy(() -> new Mount("/mcp/{profile}", "profile", new Object()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("plain segments");
    assertThatThrownBy(() -> new Mount("/mcp/", "profile", new Object()))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new Mount("/mcp", "Profile", new Object()))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
