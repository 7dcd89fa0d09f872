package dev.toolhost.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.bus.InMemoryBus;
import dev.toolhost.bus.MessageBus;
import dev.toolhost.core.ToolProfile;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.host.HostConfig;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Pins the tool list of each built-in profile on a host with every extension on the class path,
 * each configured so that it registers its tools: the built-in guides, working memory and service
 * search, long-term memory, the MCP bridge with run-time registration on, an agent (with the
 * subagent tools), a tool service on a bus, the sandbox tools, and scheduling (its database in a
 * temporary directory). The lists come from the extensions' real registrations and profile rules,
 * so a new tool, or a rule that changes, changes a list and fails here until the snapshot is
 * updated on purpose: run with {@code -Dtoolhost.updateSnapshots=true} and review the diff of
 * {@code src/test/resources/profile-snapshots}.
 */
class ToolProfileSnapshotTest {

  private static final Path SNAPSHOTS = Path.of("src/test/resources/profile-snapshots");

  private static final Path STATE =
      Path.of(System.getProperty("java.io.tmpdir"))
          .resolve("toolhost-snapshot-" + java.util.UUID.randomUUID());

  private static final String CONFIG =
      """
          tool_services:
            services:
              custom-rag: {topic: custom-rag-request}
            tools:
              query-customers:
                type: tool-service
                description: Query the customer knowledge base
                service: custom-rag
          mcp:
            allow_register: stdio
          agents:
            research:
              model: small
              base_url: http://127.0.0.1:1/v1
              description: Researches a question.
          exec:
            workspace_root: %s
          scheduling:
            state_dir: %s
            agent: research
          a2a:
            agents:
              billing:
                url: http://127.0.0.2:9
          """;

  private static MessageBus bus;
  private static Host host;
  private static Path workspaces;

  @TempDir static Path memories;

  @BeforeAll
  static void startHost() throws IOException {
    workspaces = Files.createTempDirectory("snapshot-workspaces");
    bus = new InMemoryBus();
    host =
        Host.builder(
                HostConfig.parse(
                    CONFIG.formatted(workspaces, STATE)
                        + "long_term_memory:\n  state_dir: "
                        + memories
                        + "\n",
                    "snapshot.yaml"))
            .environment(Map.of())
            .service(MessageBus.class, bus)
            .build();
  }

  @AfterAll
  static void closeHost() throws IOException {
    host.close();
    bus.close();
    // The workspace root holds the folder of the workspaces' images besides them.
    for (Path made : List.of(workspaces, STATE)) {
      try (Stream<Path> files = Files.walk(made)) {
        for (Path file : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
          Files.delete(file);
        }
      }
    }
  }

  static Stream<String> builtInProfiles() {
    return ToolProfiles.BUILT_IN.stream().map(ToolProfile::name);
  }

  @ParameterizedTest
  @MethodSource("builtInProfiles")
  void builtInProfileToolListMatchesItsSnapshot(String profile) throws IOException {
    List<String> actual =
        host.toolSet(profile).specs().stream()
            .map(spec -> spec.name() + " (" + spec.source() + ")")
            .sorted()
            .toList();
    Path snapshot = SNAPSHOTS.resolve(profile + ".txt");
    if (Boolean.getBoolean("toolhost.updateSnapshots")) {
      Files.createDirectories(SNAPSHOTS);
      Files.write(snapshot, actual, StandardCharsets.UTF_8);
    }

    List<String> expected = Files.readAllLines(snapshot, StandardCharsets.UTF_8);

    assertThat(actual)
        .as(
            "tools of profile '%s' (a change here is a change of a safety boundary: review it, then"
                + " update %s)",
            profile, snapshot)
        .containsExactlyElementsOf(expected);
  }
}
