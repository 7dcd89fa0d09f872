package dev.toolhost.a2a;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The A2A wire is the JSON of both protocol versions, written and read in one place: 0.3's
 * kind-tagged objects ({@code "kind": "task"}, roles {@code user} and {@code agent}, states such as
 * {@code completed}, results unwrapped) and 1.0's ({@code TASK_STATE_COMPLETED}, {@code ROLE_USER},
 * parts without a kind, results wrapped as {@code {"task": ...}} or {@code {"message": ...}},
 * stream items as {@code statusUpdate} and {@code artifactUpdate}).
 *
 * <p>Reading is lenient across versions (a 1.0 state name in a 0.3 answer is still understood);
 * what cannot be read throws an {@link A2aException} with {@link A2aError#INVALID_PARAMS} that
 * names the field. Stateless.
 */
public final class A2aWire {

  static final JsonMapper JSON = JsonMapper.shared();

  private A2aWire() {}

  // ---- messages

  /** The message as the version writes it. */
  public static ObjectNode message(A2aMessage message, A2aVersion version) {
    ObjectNode node = JSON.createObjectNode();
    if (version == A2aVersion.V0_3) {
      node.put("kind", "message");
    }
    node.put("messageId", message.messageId());
    node.put(
        "role",
        version == A2aVersion.V1_0
            ? (message.fromAgent() ? "ROLE_AGENT" : "ROLE_USER")
            : (message.fromAgent() ? "agent" : "user"));
    ArrayNode parts = node.putArray("parts");
    ObjectNode part = parts.addObject();
    if (version == A2aVersion.V0_3) {
      part.put("kind", "text");
    }
    part.put("text", message.text());
    message.taskId().ifPresent(id -> node.put("taskId", id));
    message.contextId().ifPresent(id -> node.put("contextId", id));
    return node;
  }

  /** A message of either version. */
  public static A2aMessage readMessage(JsonNode node) {
    if (node == null || !node.isObject()) {
      throw invalid("a message must be a JSON object");
    }
    String role = node.path("role").asString("");
    boolean agent = role.equals("agent") || role.equals("ROLE_AGENT");
    if (!agent && !role.equals("user") && !role.equals("ROLE_USER")) {
      throw invalid(
          "a message's 'role' must be 'user' or 'agent' (0.3), 'ROLE_USER' or 'ROLE_AGENT' (1.0),"
              + " not '"
              + role
              + "'");
    }
    JsonNode parts = node.path("parts");
    if (!parts.isArray()) {
      throw invalid("a message needs 'parts', an array");
    }
    String id = node.path("messageId").asString("");
    return new A2aMessage(
        id.isBlank() ? UUID.randomUUID().toString() : id,
        agent,
        partsText(parts),
        text(node, "taskId"),
        text(node, "contextId"));
  }

  /** Parts as text: text parts as they are, data parts as JSON, file parts by name and URI. */
  static String partsText(JsonNode parts) {
    StringBuilder text = new StringBuilder();
    for (JsonNode part : parts) {
      String piece;
      if (part.has("text")) {
        piece = part.path("text").asString("");
      } else if (part.has("data")) {
        piece = JSON.writeValueAsString(part.get("data"));
      } else if (part.has("file")) {
        JsonNode file = part.get("file");
        piece =
            "[file "
                + file.path("name").asString("")
                + " "
                + file.path("uri").asString(file.path("mimeType").asString(""))
                + "]";
      } else if (part.has("url") || part.has("raw")) {
        piece =
            "[file "
                + part.path("filename").asString("")
                + " "
                + part.path("url").asString("")
                + "]";
      } else {
        continue;
      }
      if (!text.isEmpty()) {
        text.append('\n');
      }
      text.append(piece);
    }
    return text.toString();
  }

  // ---- tasks

  /** The task as the version writes it. */
  public static ObjectNode task(A2aTask task, A2aVersion version) {
    ObjectNode node = JSON.createObjectNode();
    if (version == A2aVersion.V0_3) {
      node.put("kind", "task");
    }
    node.put("id", task.id());
    node.put("contextId", task.contextId());
    node.set("status", status(task, version));
    ArrayNode artifacts = node.putArray("artifacts");
    task.artifacts().forEach(artifact -> artifacts.add(artifact(artifact, version)));
    return node;
  }

  private static ObjectNode status(A2aTask task, A2aVersion version) {
    ObjectNode status = JSON.createObjectNode();
    status.put("state", task.state().wireName(version));
    task.status().ifPresent(message -> status.set("message", message(message, version)));
    status.put("timestamp", Instant.now().toString());
    return status;
  }

  private static ObjectNode artifact(A2aTask.Artifact artifact, A2aVersion version) {
    ObjectNode node = JSON.createObjectNode();
    node.put("artifactId", artifact.artifactId());
    if (!artifact.name().isEmpty()) {
      node.put("name", artifact.name());
    }
    ObjectNode part = node.putArray("parts").addObject();
    if (version == A2aVersion.V0_3) {
      part.put("kind", "text");
    }
    part.put("text", artifact.text());
    return node;
  }

  /** A task of either version. */
  public static A2aTask readTask(JsonNode node) {
    if (node == null || !node.isObject()) {
      throw invalid("a task must be a JSON object");
    }
    String id = node.path("id").asString("");
    if (id.isBlank()) {
      throw invalid("a task needs an 'id'");
    }
    JsonNode status = node.path("status");
    String stateName = status.path("state").asString("");
    TaskState state =
        TaskState.fromWireName(stateName)
            .orElseThrow(() -> invalid("the task's state '" + stateName + "' is not known"));
    Optional<A2aMessage> message =
        status.path("message").isObject()
            ? Optional.of(readMessage(status.get("message")))
            : Optional.empty();
    List<A2aTask.Artifact> artifacts = new ArrayList<>();
    for (JsonNode artifact : node.path("artifacts")) {
      artifacts.add(readArtifact(artifact));
    }
    return new A2aTask(id, node.path("contextId").asString(""), state, message, artifacts);
  }

  private static A2aTask.Artifact readArtifact(JsonNode artifact) {
    return new A2aTask.Artifact(
        artifact.path("artifactId").asString(""),
        artifact.path("name").asString(""),
        partsText(artifact.path("parts")));
  }

  // ---- results and stream items

  /** The result of a send or of one stream item, as the version writes it. */
  public static ObjectNode event(A2aEvent event, A2aVersion version) {
    boolean v03 = version == A2aVersion.V0_3;
    return switch (event) {
      case A2aEvent.TaskSnapshot snapshot ->
          v03 ? task(snapshot.task(), version) : wrap("task", task(snapshot.task(), version));
      case A2aEvent.Reply reply ->
          v03
              ? message(reply.message(), version)
              : wrap("message", message(reply.message(), version));
      case A2aEvent.StatusUpdate update -> {
        ObjectNode node = taskEvent("status-update", update.task(), v03);
        node.set("status", status(update.task(), version));
        node.put("final", update.last());
        yield v03 ? node : wrap("statusUpdate", node);
      }
      case A2aEvent.ArtifactUpdate update -> {
        ObjectNode node = taskEvent("artifact-update", update.task(), v03);
        node.set("artifact", artifact(update.artifact(), version));
        node.put("append", false);
        node.put("lastChunk", true);
        yield v03 ? node : wrap("artifactUpdate", node);
      }
    };
  }

  /** The start of an event about a task: its kind (named only in 0.3), the task and its context. */
  private static ObjectNode taskEvent(String kind, A2aTask task, boolean v03) {
    ObjectNode node = JSON.createObjectNode();
    if (v03) {
      node.put("kind", kind);
    }
    node.put("taskId", task.id());
    node.put("contextId", task.contextId());
    return node;
  }

  private static ObjectNode wrap(String field, ObjectNode value) {
    ObjectNode node = JSON.createObjectNode();
    node.set(field, value);
    return node;
  }

  /**
   * The result of a send, or one stream item, of either version. A status or artifact update is
   * applied to the task so far ({@code current}), when there is one.
   */
  public static A2aEvent readEvent(JsonNode result, Optional<A2aTask> current) {
    if (result == null || !result.isObject()) {
      throw invalid("a result must be a JSON object");
    }
    String kind = result.path("kind").asString("");
    if (kind.equals("task") || result.has("task")) {
      return new A2aEvent.TaskSnapshot(readTask(kind.equals("task") ? result : result.get("task")));
    }
    if (kind.equals("message") || result.has("message") && !result.has("taskId")) {
      return new A2aEvent.Reply(
          readMessage(kind.equals("message") ? result : result.get("message")));
    }
    if (kind.equals("status-update") || result.has("statusUpdate")) {
      JsonNode update = kind.isEmpty() ? result.get("statusUpdate") : result;
      A2aTask task = readTask(taskOfUpdate(update, current));
      return new A2aEvent.StatusUpdate(
          current.map(t -> t.with(task.state(), task.status())).orElse(task),
          update.path("final").asBoolean(false));
    }
    if (kind.equals("artifact-update") || result.has("artifactUpdate")) {
      JsonNode update = kind.isEmpty() ? result.get("artifactUpdate") : result;
      A2aTask.Artifact artifact = readArtifact(update.path("artifact"));
      A2aTask base =
          current.orElseGet(
              () ->
                  new A2aTask(
                      update.path("taskId").asString(""),
                      update.path("contextId").asString(""),
                      TaskState.WORKING,
                      Optional.empty(),
                      List.of()));
      return new A2aEvent.ArtifactUpdate(base.withArtifact(artifact), artifact);
    }
    if (result.has("id") && result.has("status")) {
      return new A2aEvent.TaskSnapshot(readTask(result));
    }
    throw invalid("the result is neither a task, a message, nor a task update");
  }

  private static ObjectNode taskOfUpdate(JsonNode update, Optional<A2aTask> current) {
    ObjectNode task = JSON.createObjectNode();
    task.put("id", update.path("taskId").asString(current.map(A2aTask::id).orElse("")));
    task.put("contextId", update.path("contextId").asString(""));
    task.set("status", update.path("status"));
    return task;
  }

  // ---- requests

  /** The params of a send: the message, and whether the call waits for the task to end. */
  public static ObjectNode sendParams(A2aMessage message, boolean blocking, A2aVersion version) {
    return sendParams(message, blocking, version, Optional.empty());
  }

  /** The params of a send naming the skill asked for, in the request's metadata. */
  public static ObjectNode sendParams(
      A2aMessage message, boolean blocking, A2aVersion version, Optional<String> skill) {
    ObjectNode params = JSON.createObjectNode();
    skill.ifPresent(id -> params.putObject("metadata").put("skill", id));
    params.set("message", message(message, version));
    ObjectNode configuration = params.putObject("configuration");
    configuration.putArray("acceptedOutputModes").add("text/plain");
    if (version == A2aVersion.V1_0) {
      configuration.put("returnImmediately", !blocking);
    } else {
      configuration.put("blocking", blocking);
    }
    return params;
  }

  /** Whether a send's params ask the server to wait for the task to end (0.3's default: yes). */
  public static boolean blocking(JsonNode params) {
    JsonNode configuration = params.path("configuration");
    if (configuration.has("returnImmediately")) {
      return !configuration.path("returnImmediately").asBoolean(false);
    }
    return configuration.path("blocking").asBoolean(true);
  }

  /** The params of a get or a cancel: the task's id. */
  public static ObjectNode idParams(String taskId) {
    ObjectNode params = JSON.createObjectNode();
    params.put("id", taskId);
    return params;
  }

  /**
   * The task id a get's or cancel's params name ({@code id}, or 1.0's {@code name: tasks/{id}}).
   */
  public static String taskId(JsonNode params) {
    String id = params.path("id").asString("");
    if (id.isBlank()) {
      String name = params.path("name").asString("");
      id = name.startsWith("tasks/") ? name.substring("tasks/".length()) : name;
    }
    if (id.isBlank()) {
      throw invalid("the params need the task's 'id'");
    }
    return id;
  }

  // ---- JSON-RPC envelopes

  /** A JSON-RPC request. */
  public static ObjectNode request(Object id, String method, JsonNode params) {
    ObjectNode node = JSON.createObjectNode();
    node.put("jsonrpc", "2.0");
    node.set("id", JSON.valueToTree(id));
    node.put("method", method);
    node.set("params", params);
    return node;
  }

  /** A JSON-RPC success. */
  public static ObjectNode success(JsonNode id, JsonNode result) {
    ObjectNode node = JSON.createObjectNode();
    node.put("jsonrpc", "2.0");
    node.set("id", id);
    node.set("result", result);
    return node;
  }

  /** A JSON-RPC error. */
  public static ObjectNode failure(JsonNode id, int code, String message) {
    ObjectNode node = JSON.createObjectNode();
    node.put("jsonrpc", "2.0");
    node.set("id", id);
    ObjectNode error = node.putObject("error");
    error.put("code", code);
    error.put("message", message);
    return node;
  }

  private static Optional<String> text(JsonNode node, String field) {
    String value = node.path(field).asString("");
    return value.isBlank() ? Optional.empty() : Optional.of(value);
  }

  private static A2aException invalid(String message) {
    return new A2aException(A2aError.INVALID_PARAMS, message);
  }
}
