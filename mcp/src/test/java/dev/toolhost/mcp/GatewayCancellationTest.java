package dev.toolhost.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ToolAnnotations;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSet;
import dev.toolhost.core.ToolSpec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * A client of the gateway that sends {@code notifications/cancelled} stops the host's tool: our
 * cancel client on the TypeScript SDK calls a tool that sleeps 60 s and aborts the call, and the
 * tool's thread is interrupted within a second, over Streamable HTTP and over stdio (the gateway in
 * a process of its own, {@link StdioGateway}, that the client starts as a desktop client does).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class GatewayCancellationTest {

  private static final JsonMapper JSON = JsonMapper.shared();

  @TempDir Path temp;
  private final ToolRegistry registry = new ToolRegistry();
  private McpGateway gateway;
  private ServedGateway http;

  @AfterEach
  void stop() throws Exception {
    if (http != null) {
      http.close();
    }
    if (gateway != null) {
      gateway.close();
    }
  }

  /**
   * The tool {@code sleep}: it sleeps 60 s, telling the listener when it started and when it was
   * interrupted ({@code started}, {@code interrupted}, each with the epoch milliseconds).
   */
  static ExecutableTool sleep(BiConsumer<String, Long> events) {
    return ExecutableTool.of(
        new ToolSpec(
            "sleep",
            "Sleeps 60 s.",
            JSON.createObjectNode().put("type", "object"),
            "test",
            ToolAnnotations.UNSPECIFIED),
        (call, arguments) -> {
          events.accept("started", System.currentTimeMillis());
          try {
            Thread.sleep(60_000);
          } catch (InterruptedException e) {
            events.accept("interrupted", System.currentTimeMillis());
            throw e;
          }
          return ToolResult.success("slept 60 s");
        });
  }

  @Test
  void aClientsCancellationInterruptsTheHostsToolWithinASecond() throws Exception {
    CompletableFuture<Long> started = new CompletableFuture<>();
    CompletableFuture<Long> interrupted = new CompletableFuture<>();
    registry.register(
        sleep((event, at) -> (event.equals("started") ? started : interrupted).complete(at)));
    gateway =
        McpGateway.http(
            registry,
            ToolSet.of(registry, ToolProfiles.MAIN),
            ToolDispatcher.create(),
            "/mcp",
            List.of("127.0.0.1:*", "localhost:*"),
            List.of("http://127.0.0.1:*"));
    http = ServedGateway.serve(gateway);

    Process client =
        new ProcessBuilder(NpmPackages.cancelClient(http.endpoint().toString(), "sleep", 2000))
            .redirectError(temp.resolve("client.err").toFile())
            .start();
    assertThat(client.waitFor(30, TimeUnit.SECONDS)).as("the client ended").isTrue();
    JsonNode ended =
        JSON.readTree(new String(client.getInputStream().readAllBytes(), StandardCharsets.UTF_8));

    assertThat(started).as("the tool ran").isCompleted();
    assertThat(ended.path("ended").asString()).contains("The user stopped the call.");
    long seen = interrupted.get(1, TimeUnit.SECONDS);
    assertThat(seen - ended.path("abortedAt").asLong())
        .as("milliseconds from the client's cancel to the tool seeing it")
        .isLessThan(1000);
  }

  @Test
  void aStdioClientsCancellationInterruptsTheHostsToolWithinASecond() throws Exception {
    Path record = temp.resolve("record.txt");
    Process client =
        new ProcessBuilder(
                NpmPackages.cancelClientOverStdio(
                    TestProcesses.javaMain(StdioGateway.class, record.toString()), "sleep", 4000))
            .redirectError(temp.resolve("client.err").toFile())
            .start();
    try {
      assertThat(client.waitFor(40, TimeUnit.SECONDS)).as("the client ended").isTrue();
      JsonNode ended =
          JSON.readTree(new String(client.getInputStream().readAllBytes(), StandardCharsets.UTF_8));

      assertThat(ended.path("ended").asString()).contains("The user stopped the call.");
      List<String> lines = Files.readAllLines(record);
      assertThat(lines).as("what the gateway's tool recorded").hasSize(2);
      assertThat(lines.get(0)).as("the tool ran").startsWith("started ");
      assertThat(lines.get(1)).as("the tool was interrupted").startsWith("interrupted ");
      long seen = Long.parseLong(lines.get(1).substring("interrupted ".length()));
      assertThat(seen - ended.path("abortedAt").asLong())
          .as("milliseconds from the client's cancel to the tool seeing it")
          .isLessThan(1000);
    } finally {
      client.destroyForcibly();
      TestProcesses.killDescendants(StdioGateway.class.getName());
    }
  }

  /**
   * A stdio gateway in a process of its own, serving one tool, {@code sleep}, that sleeps 60 s and
   * records in the file named by its argument when it started and when it was interrupted (epoch
   * milliseconds, a line each).
   */
  public static final class StdioGateway {

    private StdioGateway() {}

    /** Serves on standard input and output until the client ends the process. */
    public static void main(String[] args) throws Exception {
      Path record = Path.of(args[0]);
      ToolRegistry registry = new ToolRegistry();
      registry.register(sleep((event, at) -> note(record, event + " " + at)));
      McpGateway.stdio(
          registry,
          ToolSet.of(registry, ToolProfiles.MAIN),
          ToolDispatcher.create(),
          System.in,
          System.out);
      new CountDownLatch(1).await();
    }

    private static void note(Path record, String line) {
      try {
        Files.writeString(
            record, line + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
