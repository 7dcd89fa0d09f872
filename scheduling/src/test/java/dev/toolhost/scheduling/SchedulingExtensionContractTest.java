package dev.toolhost.scheduling;

import dev.toolhost.core.spi.HostExtension;
import dev.toolhost.testing.HostExtensionContract;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The scheduling extension keeps the host extension contract with its embedded H2 store in the
 * test's own directory: off until configured, then its three tools, its two routes, its poller, and
 * its profile rules (subagents may not cancel, fired tasks may not schedule).
 */
class SchedulingExtensionContractTest extends HostExtensionContract<SchedulingConfig> {

  @Override
  protected HostExtension<SchedulingConfig> extension() {
    return new SchedulingExtension();
  }

  @Override
  protected Optional<String> validSection() {
    return Optional.of(
        """
        store: embedded
        state_dir: %s
        zone: Europe/Paris
        poll_interval: 1s
        """
            .formatted(directory.resolve("state")));
  }

  @Override
  protected Optional<Misspelling> misspelling() {
    return Optional.of(
        new Misspelling(
            """
            store: embedded
            poll_intervall: 1s
            """,
            2,
            1,
            "poll_intervall"));
  }

  @Override
  protected Set<String> configuredTools() {
    return Set.of(SchedulingTools.SCHEDULE, SchedulingTools.LIST, SchedulingTools.CANCEL);
  }

  @Override
  protected List<String> routes() {
    return List.of(
        "GET " + SchedulingExtension.SCHEDULES_PATH, "GET " + SchedulingExtension.RUNS_PATH);
  }

  /** A subagent schedules and lists; a fire lists and cancels; synthesis schedules nothing. */
  @Override
  protected Map<String, Set<String>> grantedTools() {
    return Map.of(
        "subagent",
        Set.of(SchedulingTools.SCHEDULE, SchedulingTools.LIST),
        "scheduled",
        Set.of(SchedulingTools.LIST, SchedulingTools.CANCEL));
  }
}
