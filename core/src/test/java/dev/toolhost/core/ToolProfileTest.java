package dev.toolhost.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ToolProfileTest {

  private static final ToolProfile NOTHING = ToolProfile.none("nothing");

  @Test
  void profileWithNoAllowsAllowsNothing() {
    assertThat(NOTHING.allows("web_search", "builtin:web")).isFalse();
  }

  @Test
  void toolIsAllowedByItsName() {
    ToolProfile profile = NOTHING.withNames("web_search");

    assertThat(profile.allows("web_search", "builtin:web")).isTrue();
    assertThat(profile.allows("web_browse", "builtin:web")).isFalse();
  }

  @Test
  void toolIsAllowedByItsSource() {
    ToolProfile profile = NOTHING.withSources("builtin:web");

    assertThat(profile.allows("web_browse", "builtin:web")).isTrue();
    assertThat(profile.allows("shell", "builtin:sandbox")).isFalse();
  }

  @Test
  void starAllowsEverySource() {
    assertThat(NOTHING.withSources("*").allows("anything", "mcp:anywhere")).isTrue();
  }

  @Test
  void sourcesMatchExactlyNotByPrefix() {
    ToolProfile profile = NOTHING.withSources("mcp");

    assertThat(profile.allows("forecast", "mcp:weather")).isFalse();
  }

  @Test
  void denyByNameWinsOverAllowByName() {
    ToolProfile profile = NOTHING.withNames("shell").withoutNames("shell");

    assertThat(profile.allows("shell", "builtin:sandbox")).isFalse();
  }

  @Test
  void denyByNameWinsOverAllowBySourceAndStar() {
    ToolProfile profile =
        ToolProfile.all("all").withSources("builtin:sandbox").withoutNames("shell");

    assertThat(profile.allows("shell", "builtin:sandbox")).isFalse();
    assertThat(profile.allows("file", "builtin:sandbox")).isTrue();
  }

  @Test
  void denyBySourceWinsOverAllowByName() {
    ToolProfile profile = NOTHING.withNames("spawn_subagent").withoutSources("subagent");

    assertThat(profile.allows("spawn_subagent", "subagent")).isFalse();
  }

  @Test
  void denyBySourceWinsOverStar() {
    ToolProfile profile = ToolProfile.all("all").withoutSources("a2a");

    assertThat(profile.allows("invoke_agent", "a2a")).isFalse();
    assertThat(profile.allows("web_search", "builtin:web")).isTrue();
  }

  @Test
  void compositionReturnsNewProfilesAndLeavesTheOriginalAlone() {
    ToolProfile base = NOTHING.withSources("builtin:web");
    ToolProfile narrower = base.withoutNames("web_browse");

    assertThat(base.allows("web_browse", "builtin:web")).isTrue();
    assertThat(narrower.allows("web_browse", "builtin:web")).isFalse();
    assertThat(narrower.allowedSources()).isEqualTo(Set.of("builtin:web"));
  }

  // Grants as the scheduling and MCP extensions make them, and long-term memory's denial in main.
  private static final List<ToolProfile> WITH_EXTENSION_RULES =
      ToolProfiles.withRules(
          Map.of(
              "subagent",
              List.of("schedule_task", "list_scheduled_tasks", "mcp_invoke_tool"),
              "scheduled",
              List.of("list_scheduled_tasks", "cancel_scheduled_task")),
          Map.of("main", List.of("memory_delete")));

  @Test
  void restrictedBuiltInProfilesAllowNothingUntilExtensionsGrantTools() {
    assertThat(ToolProfiles.SUBAGENT)
        .isEqualTo(new ToolProfile("subagent", Set.of(), Set.of("subagent"), Set.of(), Set.of()));
    assertThat(ToolProfiles.SCHEDULED)
        .isEqualTo(new ToolProfile("scheduled", Set.of(), Set.of("subagent"), Set.of(), Set.of()));
    assertThat(ToolProfiles.A2A_SYNTHESIS)
        .isEqualTo(
            new ToolProfile(
                "a2a_synthesis", Set.of(), Set.of("a2a", "subagent"), Set.of(), Set.of()));
    // A new capability's tool, a bridged server's, a worker's: in main, in no restricted profile.
    for (ToolProfile restricted : ToolProfiles.RESTRICTED) {
      assertThat(restricted.allows("brand_new_tool", "mcp:brand-new")).isFalse();
    }
    assertThat(ToolProfiles.MAIN.allows("brand_new_tool", "mcp:brand-new")).isTrue();
  }

  @Test
  void aGrantNamesARestrictedProfileAndADenialABuiltInOne() {
    assertThatThrownBy(() -> ToolProfiles.withAllowed(Map.of("main", List.of("x"))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("No restricted built-in profile is named 'main'");
    assertThatThrownBy(() -> ToolProfiles.withRules(Map.of(), Map.of("reviewer", List.of("x"))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("No built-in profile is named 'reviewer'");
  }

  @Test
  void builtInProfilesAreTheSeedsTableAsAllowLists() {
    assertThat(WITH_EXTENSION_RULES.get(0))
        .isEqualTo(
            new ToolProfile("main", Set.of("*"), Set.of(), Set.of(), Set.of("memory_delete")));
    assertThat(WITH_EXTENSION_RULES.get(1))
        .isEqualTo(
            new ToolProfile(
                "subagent",
                Set.of(),
                Set.of("subagent"),
                Set.of("schedule_task", "list_scheduled_tasks", "mcp_invoke_tool"),
                Set.of()));
    assertThat(WITH_EXTENSION_RULES.get(2))
        .isEqualTo(
            new ToolProfile(
                "scheduled",
                Set.of(),
                Set.of("subagent"),
                Set.of("list_scheduled_tasks", "cancel_scheduled_task"),
                Set.of()));
    assertThat(WITH_EXTENSION_RULES.get(3)).isEqualTo(ToolProfiles.A2A_SYNTHESIS);
  }

  @Test
  void userProfilesJoinTheBuiltInOnesInNameOrder() {
    ToolProfiles profiles =
        ToolProfiles.of(
            WITH_EXTENSION_RULES,
            List.of(
                NOTHING.named("zeta"),
                WITH_EXTENSION_RULES.get(1).named("reviewer").withoutNames("x")));

    assertThat(profiles.names())
        .containsExactly("main", "subagent", "scheduled", "a2a_synthesis", "reviewer", "zeta");
    assertThat(profiles.get("reviewer").deniedNames()).contains("x");
    assertThat(profiles.get("reviewer").allowedNames()).contains("schedule_task");
  }

  @Test
  void userProfileCannotReplaceABuiltInOne() {
    assertThatThrownBy(() -> ToolProfiles.of(List.of(ToolProfile.all("subagent"))))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("Tool profile 'subagent' is built in and cannot be redefined.");
    assertThatThrownBy(
            () -> ToolProfiles.of(List.of(ToolProfile.all("mine"), ToolProfile.none("mine"))))
        .hasMessage("Tool profile 'mine' is defined twice.");
  }

  @Test
  void unknownProfileNamesTheKnownOnes() {
    assertThatThrownBy(() -> ToolProfiles.builtIn().get("admin"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "Unknown tool profile 'admin'. Known profiles: main, subagent, scheduled,"
                + " a2a_synthesis");
  }
}
