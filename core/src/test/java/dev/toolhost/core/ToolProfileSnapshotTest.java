package dev.toolhost.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Pins the tool list of each built-in profile over a canonical registry: one that holds the real
 * built-in tools and a representative tool of every source Toolhost has or plans. A tool or source
 * that silently enters a restricted profile changes a list and fails here, forcing a conscious
 * decision. To accept a change, run with {@code -Dtoolhost.updateSnapshots=true} and review the
 * diff of {@code src/test/resources/profile-snapshots}.
 */
class ToolProfileSnapshotTest {

  private static final Path SNAPSHOTS = Path.of("src/test/resources/profile-snapshots");

  /** The canonical registry: real built-ins, plus one stand-in per source still to come. */
  static ToolRegistry canonicalRegistry() {
    ToolRegistry registry = new ToolRegistry();
    registry.registerAll(new ToolGuides().tools());
    Stream.of(
            "builtin:web web_search web_browse",
            "builtin:scheduling schedule_task list_scheduled_tasks cancel_scheduled_task",
            "builtin:scripts execute_python_script",
            "builtin:sandbox shell file exec",
            "builtin:memory get_from_working_memory list_working_memory",
            "builtin:search search_known_services search_tools",
            "mcp:management mcp_list_services mcp_get_service_details mcp_invoke_tool"
                + " mcp_register_server mcp_unregister_server",
            "mcp:weather weather_get_forecast",
            "subagent spawn_subagent cancel_subagent list_subagents",
            "a2a invoke_agent list_known_agents get_agent_details",
            "agent:research research",
            "remote:billing billing_lookup",
            "service:custom-rag custom_rag_query")
        .forEach(
            line -> {
              String[] words = line.split(" ");
              for (int i = 1; i < words.length; i++) {
                registry.register(
                    Schemas.spec(words[i], words[0]), (call, arguments) -> ToolResult.success(""));
              }
            });
    return registry;
  }

  static Stream<ToolProfile> builtInProfiles() {
    return ToolProfiles.BUILT_IN.stream();
  }

  @ParameterizedTest
  @MethodSource("builtInProfiles")
  void builtInProfileToolListMatchesItsSnapshot(ToolProfile profile) throws IOException {
    List<String> actual =
        ToolSet.of(canonicalRegistry(), profile).specs().stream()
            .map(spec -> spec.name() + " (" + spec.source() + ")")
            .toList();
    Path snapshot = SNAPSHOTS.resolve(profile.name() + ".txt");
    if (Boolean.getBoolean("toolhost.updateSnapshots")) {
      Files.createDirectories(SNAPSHOTS);
      Files.write(snapshot, actual, StandardCharsets.UTF_8);
    }

    List<String> expected = Files.readAllLines(snapshot, StandardCharsets.UTF_8);

    assertThat(actual)
        .as(
            "tools of profile '%s' (a change here is a change of a safety boundary: review it, then"
                + " update %s)",
            profile.name(), snapshot)
        .containsExactlyElementsOf(expected);
  }
}
