package dev.toolhost.benchmarks.load;

import dev.toolhost.benchmarks.AddTool;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;

/**
 * MCP sessions are the sessions a load run opens on a host's gateway before it drives it, as an MCP
 * client opens one: {@code initialize}, then {@code notifications/initialized}, over Streamable
 * HTTP with the JDK's client. Their ids go to a file, one a line, for the load script.
 */
final class McpSessions {

  private static final String PROTOCOL = "2025-06-18";
  private static final String INITIALIZE =
      """
      {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"%s",\
      "capabilities":{},"clientInfo":{"name":"toolhost-load","version":"1"}}}"""
          .formatted(PROTOCOL);
  private static final String INITIALIZED =
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
  private static final String CALL =
      """
      {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"%s","arguments":%s}}"""
          .formatted(AddTool.INLINE_NAME, AddTool.ARGUMENTS);

  private McpSessions() {}

  /**
   * Opens {@code count} sessions on the gateway at {@code endpoint}, at most 32 at a time, checks
   * that a call in the first answers the sum, and writes their ids to {@code file}.
   *
   * @throws IllegalStateException when the gateway refuses a session or the call answers otherwise
   */
  static List<String> open(URI endpoint, int count, Path file) throws Exception {
    List<String> ids = new ArrayList<>();
    try (HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
      Semaphore open = new Semaphore(32);
      List<Future<String>> opened = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        opened.add(
            threads.submit(
                () -> {
                  open.acquire();
                  try {
                    return session(client, endpoint);
                  } finally {
                    open.release();
                  }
                }));
      }
      for (Future<String> session : opened) {
        try {
          ids.add(session.get());
        } catch (ExecutionException e) {
          throw new IllegalStateException("Opening an MCP session failed", e.getCause());
        }
      }
      HttpResponse<String> answer = client.send(post(endpoint, ids.getFirst(), CALL), body());
      if (answer.statusCode() != 200 || !answer.body().contains("\"text\":\"5\"")) {
        throw new IllegalStateException(
            "tools/call of " + AddTool.INLINE_NAME + " did not answer 5: " + answer.body());
      }
    }
    Files.write(file, ids);
    return ids;
  }

  private static String session(HttpClient client, URI endpoint)
      throws IOException, InterruptedException {
    HttpResponse<String> initialized = client.send(post(endpoint, "", INITIALIZE), body());
    String id =
        initialized
            .headers()
            .firstValue("Mcp-Session-Id")
            .orElseThrow(
                () ->
                    new IllegalStateException(
                        "initialize answered "
                            + initialized.statusCode()
                            + " with no Mcp-Session-Id: "
                            + initialized.body()));
    HttpResponse<String> notified = client.send(post(endpoint, id, INITIALIZED), body());
    if (notified.statusCode() / 100 != 2) {
      throw new IllegalStateException(
          "notifications/initialized answered " + notified.statusCode() + ": " + notified.body());
    }
    return id;
  }

  private static HttpRequest post(URI endpoint, String session, String json) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(endpoint)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("Mcp-Protocol-Version", PROTOCOL)
            .POST(HttpRequest.BodyPublishers.ofString(json));
    if (!session.isEmpty()) {
      request.header("Mcp-Session-Id", session);
    }
    return request.build();
  }

  private static HttpResponse.BodyHandler<String> body() {
    return HttpResponse.BodyHandlers.ofString();
  }
}
