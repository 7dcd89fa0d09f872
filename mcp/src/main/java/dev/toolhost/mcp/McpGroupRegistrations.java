package dev.toolhost.mcp;

import dev.toolhost.bus.BusException;
import dev.toolhost.bus.Message;
import dev.toolhost.bus.MessageBus;
import dev.toolhost.bus.Subscription;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ToolException;
import dev.toolhost.core.ToolResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * Group registrations keep the MCP servers a model registers at run time alike on the workers of
 * one group. A registration call reaches one worker of the group (on the group's queue, like any
 * call); that worker registers the server under its own policy and, when it did, tells the others
 * on the group's topic {@code toolhost.mcp.{group}}; each of them registers it too, under its own
 * policy (a worker whose policy refuses it logs why). Unregistering travels the same way.
 *
 * <p>Only the workers running at that moment hear of it: a worker started later bridges the servers
 * of its config. Servers meant to last belong in the config. Thread-safe; {@link #close()} stops
 * listening.
 */
public final class McpGroupRegistrations implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(McpGroupRegistrations.class);
  private static final JsonMapper JSON = JsonMapper.shared();

  private final MessageBus bus;
  private final String group;
  private final String workerId;
  private final McpBridge bridge;
  private final Runnable changed;
  private Subscription subscription;

  /**
   * Registrations for the worker of the given id in the group, on its bridge.
   *
   * @param changed runs after a server was registered or unregistered here (the worker announces
   *     itself again)
   */
  public McpGroupRegistrations(
      MessageBus bus, String group, String workerId, McpBridge bridge, Runnable changed) {
    this.bus = Objects.requireNonNull(bus, "bus");
    this.group = Objects.requireNonNull(group, "group");
    this.workerId = Objects.requireNonNull(workerId, "workerId");
    this.bridge = Objects.requireNonNull(bridge, "bridge");
    this.changed = Objects.requireNonNull(changed, "changed");
  }

  /** The topic the workers of a group tell each other of registrations on. */
  public static String topic(String group) {
    return "toolhost.mcp." + group;
  }

  /** Starts listening to the other workers of the group. */
  public synchronized McpGroupRegistrations start() {
    subscription =
        bus.subscribe(
            topic(group),
            delivery -> {
              delivery.ack();
              String body = delivery.message().body();
              // Connecting a server takes a while: never on the delivery thread.
              Thread.ofVirtual().name("toolhost-mcp-registration").start(() -> heard(body));
            });
    return this;
  }

  /**
   * The registration tools among the bridge's management tools (none when its policy offers none),
   * each telling the group of a change it made, and running {@code changed} after it.
   */
  public List<ExecutableTool> registrationTools(List<ExecutableTool> management) {
    List<ExecutableTool> tools = new ArrayList<>();
    for (ExecutableTool tool : management) {
      if (!McpManagementTools.registers(tool)
          || !tool.spec().source().equals(McpBridge.MANAGEMENT_SOURCE)) {
        continue;
      }
      String type =
          tool.name().equals(McpManagementTools.REGISTER_SERVER) ? "register" : "unregister";
      tools.add(
          tool.withExecutor(
              (call, arguments) -> {
                ToolResult result = tool.executor().execute(call, arguments);
                if (!result.isError()) {
                  tell(type, arguments);
                  changed.run();
                }
                return result;
              }));
    }
    return tools;
  }

  private void tell(String type, JsonNode arguments) {
    ObjectNode notice = JSON.createObjectNode();
    notice.put("type", type);
    notice.put("worker_id", workerId);
    notice.put("server_name", arguments.path("server_name").asString(""));
    if (type.equals("register")) {
      notice.put("command", arguments.path("command").asString(""));
      notice.set(
          "arguments",
          arguments.path("arguments").isArray()
              ? arguments.get("arguments")
              : JSON.createArrayNode());
    }
    try {
      bus.publish(topic(group), Message.of(notice.toString()));
    } catch (BusException e) {
      LOG.warn(
          "Could not tell the workers of group '{}' of the {} of MCP server '{}': {}",
          group,
          type,
          notice.path("server_name").asString(""),
          e.getMessage());
    }
  }

  /** Applies another worker's registration or unregistration here. */
  void heard(String text) {
    JsonNode notice;
    try {
      notice = JSON.readTree(text);
    } catch (JacksonException e) {
      LOG.warn("Ignored a registration notice that is not JSON: {}", e.getOriginalMessage());
      return;
    }
    if (notice.path("worker_id").asString("").equals(workerId)) {
      return;
    }
    String name = notice.path("server_name").asString("");
    switch (notice.path("type").asString("")) {
      case "register" -> {
        if (bridge.server(name).isPresent()) {
          return;
        }
        List<String> arguments = new ArrayList<>();
        notice.path("arguments").forEach(argument -> arguments.add(argument.asString("")));
        McpServerConfig config;
        try {
          config =
              McpManagementTools.config(
                  bridge, name, notice.path("command").asString(""), Optional.of(arguments));
        } catch (ToolException e) {
          LOG.warn(
              "Did not register MCP server '{}' that worker {} of group '{}' registered: {}",
              name,
              notice.path("worker_id").asString(""),
              group,
              e.error().message());
          return;
        }
        try {
          bridge.add(config);
        } catch (IllegalArgumentException | IllegalStateException e) {
          LOG.warn("Did not register MCP server '{}': {}", name, e.getMessage());
          return;
        }
        LOG.info(
            "Registered MCP server '{}' as worker {} of group '{}' did",
            name,
            notice.path("worker_id").asString(""),
            group);
        changed.run();
      }
      case "unregister" -> {
        if (bridge.remove(name)) {
          changed.run();
        }
      }
      default ->
          LOG.warn(
              "Ignored a registration notice of unknown type '{}'",
              notice.path("type").asString(""));
    }
  }

  /** Stops listening. */
  @Override
  public void close() {
    Subscription listening;
    synchronized (this) {
      listening = subscription;
      subscription = null;
    }
    if (listening != null) {
      listening.close();
    }
  }
}
