package dev.toolhost.bus;

import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;

/**
 * Tool services are the TrustGraph-style tools of a host: service descriptors and the tool
 * descriptors that use them, registered with source {@code service:{id}} and a {@link
 * ToolServiceExecutor}.
 *
 * <p>Descriptors come from config ({@link #apply}) and from services announcing themselves on
 * {@value ToolWorker#ANNOUNCE_TOPIC} (via {@link RemoteTools}). Applying is all-or-nothing: a tool
 * that names an unknown service, or misses a required config param, is refused with a message
 * naming the tool and the param, and the tools applied before stay as they were. Announced tools
 * are unregistered when their service says goodbye or misses three heartbeats. An announced tool
 * whose name another source holds is not registered, with a warning logged once (not on every
 * heartbeat). Thread-safe.
 */
public final class ToolServices {

  private static final Logger LOG = LoggerFactory.getLogger(ToolServices.class);

  private final MessageBus bus;
  private final ToolRegistry registry;
  private Map<String, ExecutableTool> configured = Map.of();
  private final Map<String, Announced> announced = new HashMap<>();

  // clashing: the announced tools not registered because their name is taken, already logged.
  private record Announced(
      ToolServiceDescriptor service,
      Map<String, ToolDescriptor> tools,
      Set<String> clashing,
      long lapsesAtNanos) {}

  /** Tool services registering their tools in the registry, calling them over the bus. */
  public ToolServices(MessageBus bus, ToolRegistry registry) {
    this.bus = Objects.requireNonNull(bus, "bus");
    this.registry = Objects.requireNonNull(registry, "registry");
  }

  /**
   * Reads service descriptors from JSON: one descriptor, a list of them, or a mapping of ids to
   * descriptors (the {@code tool-service/} config section).
   *
   * @throws IllegalArgumentException saying what is wrong
   */
  public static List<ToolServiceDescriptor> parseServices(String json) {
    return each(WireJson.read(json), "id").stream().map(ToolServiceDescriptor::fromJson).toList();
  }

  /**
   * Reads tool descriptors from JSON: one descriptor, a list of them, or a mapping of names to
   * descriptors (the {@code tool/} config section).
   *
   * @throws IllegalArgumentException saying what is wrong
   */
  public static List<ToolDescriptor> parseTools(String json) {
    return each(WireJson.read(json), "name").stream().map(ToolDescriptor::fromJson).toList();
  }

  /**
   * The descriptors in a node that is one descriptor, a list, or a mapping keyed by {@code key}.
   */
  public static List<JsonNode> each(JsonNode node, String key) {
    List<JsonNode> all = new ArrayList<>();
    if (node == null || node.isNull() || node.isMissingNode()) {
      return all;
    }
    if (node.isArray()) {
      node.forEach(all::add);
    } else if (node.isObject() && node.has(key)) {
      all.add(node);
    } else if (node.isObject()) {
      for (Map.Entry<String, JsonNode> entry : node.properties()) {
        JsonNode value = entry.getValue();
        if (value.isObject() && !value.has(key)) {
          value =
              ((tools.jackson.databind.node.ObjectNode) value.deepCopy()).put(key, entry.getKey());
        }
        all.add(value);
      }
    } else {
      throw new IllegalArgumentException("expected a descriptor, a list or a mapping of them");
    }
    return all;
  }

  /**
   * Checks tool descriptors against service descriptors.
   *
   * @return every problem, each naming the tool and what is wrong; empty when all is well
   */
  public static List<String> problems(
      List<ToolServiceDescriptor> services, List<ToolDescriptor> tools) {
    Map<String, ToolServiceDescriptor> byId = new LinkedHashMap<>();
    services.forEach(service -> byId.put(service.id(), service));
    List<String> problems = new ArrayList<>();
    Set<String> names = new HashSet<>();
    for (ToolDescriptor tool : tools) {
      if (!names.add(tool.name())) {
        problems.add("tool '" + tool.name() + "' is described twice");
      }
      if (!ToolSpec.isValidName(tool.name())) {
        problems.add(
            "tool '" + tool.name() + "' has an invalid name (1 to 128 of A-Z a-z 0-9 _ - .)");
      }
      ToolServiceDescriptor service = byId.get(tool.service());
      if (service == null) {
        problems.add(
            "tool '"
                + tool.name()
                + "' references unknown service '"
                + tool.service()
                + "' (known: "
                + String.join(", ", byId.keySet())
                + ")");
        continue;
      }
      for (ToolServiceDescriptor.ConfigParam param : service.configParams()) {
        if (param.required() && !tool.config().containsKey(param.name())) {
          problems.add(
              "tool '"
                  + tool.name()
                  + "' misses required config param '"
                  + param.name()
                  + "' of service '"
                  + service.id()
                  + "'");
        }
      }
    }
    return problems;
  }

  /**
   * Replaces the configured tool services with these.
   *
   * @throws IllegalArgumentException listing every problem; nothing changes then
   */
  public synchronized void apply(List<ToolServiceDescriptor> services, List<ToolDescriptor> tools) {
    List<String> problems = problems(services, tools);
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException(String.join("\n", problems));
    }
    Map<String, ToolServiceDescriptor> byId = new HashMap<>();
    services.forEach(service -> byId.put(service.id(), service));
    List<ExecutableTool> wanted = new ArrayList<>();
    for (ToolDescriptor tool : tools) {
      wanted.add(executable(byId.get(tool.service()), tool));
    }
    for (ExecutableTool tool : wanted) {
      if (!configured.containsKey(tool.name()) && registry.find(tool.name()).isPresent()) {
        throw new IllegalArgumentException(
            "tool '"
                + tool.name()
                + "' is already registered by "
                + registry.find(tool.name()).get().spec().source());
      }
    }
    Map<String, ExecutableTool> before = configured;
    before.keySet().forEach(registry::unregister);
    Map<String, ExecutableTool> now = new LinkedHashMap<>();
    for (ExecutableTool tool : wanted) {
      if (!registry.registerIfAbsent(tool)) {
        // Another source took the name between the check and here: put everything back.
        now.keySet().forEach(registry::unregister);
        before.values().forEach(registry::registerIfAbsent);
        throw new IllegalArgumentException(
            "tool '" + tool.name() + "' was registered by another source meanwhile");
      }
      now.put(tool.name(), tool);
    }
    configured = Map.copyOf(now);
  }

  private ExecutableTool executable(ToolServiceDescriptor service, ToolDescriptor tool) {
    // The executor bounds every wait by the call's deadline: no thread hop needed.
    return ExecutableTool.of(
            new ToolSpec(
                tool.name(),
                tool.description(),
                tool.parameters(),
                ToolServiceExecutor.source(service.id())),
            new ToolServiceExecutor(bus, service, tool))
        .runInline();
  }

  /** Handles a tool service's announcement or goodbye. */
  synchronized void heard(JsonNode body) {
    ToolServiceDescriptor service;
    List<ToolDescriptor> tools;
    try {
      service = ToolServiceDescriptor.fromJson(body.path("service"));
      tools = each(body.path("tools"), "name").stream().map(ToolDescriptor::fromJson).toList();
    } catch (IllegalArgumentException e) {
      LOG.warn("Ignored a tool service announcement: {}", e.getMessage());
      return;
    }
    String key = service.id();
    if (body.path("type").asString("announce").equals("goodbye")) {
      forget(key, "said goodbye");
      return;
    }
    List<String> problems = problems(List.of(service), tools);
    if (!problems.isEmpty()) {
      LOG.warn(
          "Ignored the announcement of tool service '{}': {}", key, String.join("; ", problems));
      return;
    }
    Announced before = announced.get(key);
    Map<String, ToolDescriptor> mine = new LinkedHashMap<>();
    Set<String> clashing = new HashSet<>();
    for (ToolDescriptor tool : tools) {
      boolean ours = before != null && before.tools().containsKey(tool.name());
      if (ours
          && before.service().equals(service)
          && before.tools().get(tool.name()).equals(tool)) {
        mine.put(tool.name(), tool);
        continue;
      }
      ExecutableTool executable;
      try {
        executable = executable(service, tool);
      } catch (IllegalArgumentException e) {
        LOG.warn(
            "Tool '{}' of tool service '{}' is not registered: {}",
            tool.name(),
            key,
            e.getMessage());
        continue;
      }
      // A changed tool of ours is replaced in one step, so that a call meanwhile still finds it.
      boolean replaced =
          ours
              && registry
                  .find(tool.name())
                  .filter(current -> current.spec().source().equals(executable.spec().source()))
                  .map(current -> registry.replace(current, executable))
                  .orElse(false);
      if (!replaced && !registry.registerIfAbsent(executable)) {
        // Once, not on every heartbeat.
        if (before == null || !before.clashing().contains(tool.name())) {
          LOG.warn(
              "Tool '{}' announced by tool service '{}' is not registered: the name is taken by {}",
              tool.name(),
              key,
              registry.find(tool.name()).map(t -> t.spec().source()).orElse("another tool"));
        }
        clashing.add(tool.name());
        continue;
      }
      mine.put(tool.name(), tool);
    }
    if (before != null) {
      before.tools().keySet().stream()
          .filter(name -> !mine.containsKey(name))
          .forEach(registry::unregister);
    }
    long interval = Math.max(100, body.path("heartbeat_ms").asLong(5_000));
    announced.put(
        key,
        new Announced(
            service,
            mine,
            Set.copyOf(clashing),
            System.nanoTime() + Duration.ofMillis(interval * 3).toNanos()));
    if (before == null) {
      LOG.info("Registered tools of tool service '{}': {}", key, String.join(", ", mine.keySet()));
    }
  }

  synchronized void reap(long now) {
    for (Map.Entry<String, Announced> entry : List.copyOf(announced.entrySet())) {
      if (now - entry.getValue().lapsesAtNanos() > 0) {
        forget(entry.getKey(), "missed 3 heartbeats");
      }
    }
  }

  private void forget(String id, String why) {
    Announced gone = announced.remove(id);
    if (gone != null) {
      gone.tools().keySet().forEach(registry::unregister);
      LOG.info("Unregistered the tools of tool service '{}': it {}", id, why);
    }
  }
}
