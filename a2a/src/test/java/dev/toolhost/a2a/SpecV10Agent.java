package dev.toolhost.a2a;

import java.io.InputStream;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Server;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A local agent that speaks only the A2A 1.0 JSON of the spec: a card with {@code
 * supportedInterfaces} of protocol 1.0 and no streaming, {@code SendMessage} answering {@code
 * {"task": ...}} with {@code TASK_STATE_*} states, {@code GetTask}, {@code CancelTask}, and the
 * spec's error codes; a request without {@code A2A-Version: 1.0} is refused with -32009. A task
 * completes after {@code pollsToFinish} gets; a message that mentions an account asks for input.
 * Records every request.
 */
final class SpecV10Agent implements AutoCloseable {

  record Seen(String method, JsonNode params, Map<String, String> headers) {}

  final List<Seen> requests = new CopyOnWriteArrayList<>();
  private final Map<String, ObjectNode> tasks = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> gets = new ConcurrentHashMap<>();
  private final Server server = new Server();
  private final URI base;
  volatile int pollsToFinish = 1;

  /** Forgets every task, as an agent that restarted or evicted them does. */
  void forgetTasks() {
    tasks.clear();
  }

  volatile String description = "Answers questions about invoices and refunds.";

  SpecV10Agent() throws Exception {
    base =
        RouteServer.start(
            server,
            (request, response, callback) -> {
              String path = request.getHttpURI().getPath();
              String body;
              if (path.equals("/.well-known/agent-card.json")) {
                body = card();
              } else {
                try (InputStream in = Request.asInputStream(request)) {
                  body = rpc(A2aWire.JSON.readTree(in), request);
                }
              }
              response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
              response.write(
                  true, ByteBuffer.wrap(body.getBytes(StandardCharsets.UTF_8)), callback);
              return true;
            });
  }

  URI base() {
    return base;
  }

  private String card() {
    return """
        {"name": "Billing", "description": "%s",
         "supportedInterfaces": [{"url": "%s/rpc", "protocolBinding": "JSONRPC",
                                  "protocolVersion": "1.0"}],
         "version": "2.1.0", "capabilities": {"streaming": false},
         "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
         "skills": [{"id": "invoice-lookup", "name": "Invoice lookup",
                     "description": "Finds an invoice and says whether it is paid.",
                     "tags": ["billing", "invoices"],
                     "examples": ["Is invoice 42 paid?"]}]}"""
        .formatted(description, base);
  }

  private String rpc(JsonNode request, Request http) {
    Map<String, String> headers = new java.util.LinkedHashMap<>();
    http.getHeaders()
        .forEach(f -> headers.put(f.getName().toLowerCase(java.util.Locale.ROOT), f.getValue()));
    String method = request.path("method").asString();
    JsonNode params = request.path("params");
    requests.add(new Seen(method, params, headers));
    JsonNode id = request.path("id");
    if (!"1.0".equals(headers.get("a2a-version"))) {
      return error(id, -32009, "Only A2A 1.0 is supported here.");
    }
    switch (method) {
      case "SendMessage" -> {
        String text = params.path("message").path("parts").get(0).path("text").asString();
        String taskId = params.path("message").path("taskId").asString("");
        ObjectNode task;
        if (text.contains("account") && taskId.isEmpty()) {
          task =
              task(
                  UUID.randomUUID().toString(),
                  "TASK_STATE_INPUT_REQUIRED",
                  "Which account do you mean?",
                  null);
        } else {
          String newId = taskId.isEmpty() ? UUID.randomUUID().toString() : taskId;
          task = task(newId, "TASK_STATE_WORKING", null, null);
          task.put("pendingAnswer", "Invoice 42 is paid. (" + text + ")");
        }
        tasks.put(task.path("id").asString(), task);
        gets.put(task.path("id").asString(), new AtomicInteger());
        return result(id, A2aWire.JSON.createObjectNode().set("task", visible(task)));
      }
      case "GetTask" -> {
        ObjectNode task = tasks.get(params.path("id").asString());
        if (task == null) {
          return error(id, -32001, "Task not found");
        }
        if (task.path("status").path("state").asString().equals("TASK_STATE_WORKING")
            && gets.get(task.path("id").asString()).incrementAndGet() >= pollsToFinish) {
          ObjectNode done =
              task(
                  task.path("id").asString(),
                  "TASK_STATE_COMPLETED",
                  null,
                  task.path("pendingAnswer").asString());
          tasks.put(done.path("id").asString(), done);
          task = done;
        }
        return result(id, visible(task));
      }
      case "CancelTask" -> {
        ObjectNode task = tasks.get(params.path("id").asString());
        if (task == null) {
          return error(id, -32001, "Task not found");
        }
        if (task.path("status").path("state").asString().equals("TASK_STATE_COMPLETED")) {
          return error(id, -32002, "Task cannot be canceled");
        }
        ObjectNode cancelled = task(task.path("id").asString(), "TASK_STATE_CANCELED", null, null);
        tasks.put(cancelled.path("id").asString(), cancelled);
        return result(id, cancelled);
      }
      default -> {
        return error(id, -32601, "Method not found");
      }
    }
  }

  private static ObjectNode visible(ObjectNode task) {
    ObjectNode copy = task.deepCopy();
    copy.remove("pendingAnswer");
    return copy;
  }

  private static ObjectNode task(String id, String state, String question, String answer) {
    ObjectNode task = A2aWire.JSON.createObjectNode();
    task.put("id", id);
    task.put("contextId", "ctx-" + id);
    ObjectNode status = task.putObject("status");
    status.put("state", state);
    if (question != null) {
      ObjectNode message = status.putObject("message");
      message.put("messageId", UUID.randomUUID().toString());
      message.put("role", "ROLE_AGENT");
      message.putArray("parts").addObject().put("text", question);
    }
    if (answer != null) {
      ObjectNode artifact = task.putArray("artifacts").addObject();
      artifact.put("artifactId", "a1");
      artifact.putArray("parts").addObject().put("text", answer);
    }
    return task;
  }

  private static String result(JsonNode id, JsonNode result) {
    return A2aWire.JSON.writeValueAsString(A2aWire.success(id, result));
  }

  private static String error(JsonNode id, int code, String message) {
    return A2aWire.JSON.writeValueAsString(A2aWire.failure(id, code, message));
  }

  @Override
  public void close() throws Exception {
    server.stop();
  }
}
