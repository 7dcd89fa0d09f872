package dev.toolhost.a2a;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolResult;
import dev.toolhost.memory.InProcessWorkingMemory;
import dev.toolhost.web.OutboundHttp;
import dev.toolhost.web.OutboundPolicy;
import io.a2a.server.ServerCallContext;
import io.a2a.server.agentexecution.AgentExecutor;
import io.a2a.server.agentexecution.RequestContext;
import io.a2a.server.auth.UnauthenticatedUser;
import io.a2a.server.events.EventQueue;
import io.a2a.server.events.InMemoryQueueManager;
import io.a2a.server.requesthandlers.DefaultRequestHandler;
import io.a2a.server.tasks.BasePushNotificationSender;
import io.a2a.server.tasks.InMemoryPushNotificationConfigStore;
import io.a2a.server.tasks.InMemoryTaskStore;
import io.a2a.server.tasks.TaskUpdater;
import io.a2a.spec.AgentCapabilities;
import io.a2a.spec.AgentCard;
import io.a2a.spec.AgentSkill;
import io.a2a.spec.CancelTaskRequest;
import io.a2a.spec.GetTaskRequest;
import io.a2a.spec.SendMessageRequest;
import io.a2a.spec.SendStreamingMessageRequest;
import io.a2a.spec.SendStreamingMessageResponse;
import io.a2a.spec.TextPart;
import io.a2a.transport.jsonrpc.handler.JSONRPCHandler;
import io.a2a.util.Utils;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Flow;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Interop: the official A2A Java SDK (io.github.a2asdk 0.3.3.Final) as the server, its own request
 * handler, task store and JSON-RPC handler behind a bare JDK HTTP server, and Toolhost's client
 * calling it: card, streamed send, send and get, input-required, and the SDK's errors for a
 * finished task's cancel and an unknown task.
 */
@Timeout(60)
class SdkServerInteropTest {

  private final CountDownLatch release = new CountDownLatch(1);
  private ExecutorService pool;
  private HttpServer http;
  private JSONRPCHandler handler;
  private OutboundHttp outbound;
  private A2aClient client;
  private URI base;

  @BeforeEach
  void start() throws Exception {
    pool = Executors.newCachedThreadPool(Thread.ofPlatform().daemon().factory());
    AgentExecutor agent =
        new AgentExecutor() {
          @Override
          public void execute(RequestContext context, EventQueue queue) {
            TaskUpdater updater = new TaskUpdater(context, queue);
            String text = context.getUserInput(" ");
            if (context.getTask() == null) {
              updater.submit();
            }
            updater.startWork();
            if (text.contains("account")) {
              updater.requiresInput(
                  updater.newAgentMessage(List.of(new TextPart("Which account?")), null));
              return;
            }
            if (text.contains("slow")) {
              try {
                release.await();
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            }
            updater.addArtifact(List.of(new TextPart("SDK agent heard: " + text)));
            updater.complete();
          }

          @Override
          public void cancel(RequestContext context, EventQueue queue) {
            new TaskUpdater(context, queue).cancel();
          }
        };
    InMemoryTaskStore store = new InMemoryTaskStore();
    InMemoryPushNotificationConfigStore pushes = new InMemoryPushNotificationConfigStore();
    DefaultRequestHandler requests =
        DefaultRequestHandler.create(
            agent,
            store,
            new InMemoryQueueManager(store),
            pushes,
            new BasePushNotificationSender(pushes),
            pool);
    http = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    base = URI.create("http://127.0.0.1:" + http.getAddress().getPort());
    AgentCard card =
        new AgentCard.Builder()
            .name("sdk-agent")
            .description("An agent built on the A2A Java SDK.")
            .url(base + "/")
            .version("1.0.0")
            .protocolVersion("0.3.0")
            .preferredTransport("JSONRPC")
            .capabilities(new AgentCapabilities(true, false, false, List.of()))
            .defaultInputModes(List.of("text"))
            .defaultOutputModes(List.of("text"))
            .skills(
                List.of(
                    new AgentSkill.Builder()
                        .id("hear")
                        .name("Hear")
                        .description("Repeats what it heard")
                        .tags(List.of("echo"))
                        .examples(List.of("Hear this"))
                        .build()))
            .build();
    handler = new JSONRPCHandler(card, requests, pool);
    http.setExecutor(pool);
    http.createContext("/", this::answer);
    http.start();
    outbound = OutboundHttp.start(OutboundPolicy.defaults().allowingHost("127.0.0.1"));
    client = new A2aClient(outbound);
  }

  @AfterEach
  void stop() {
    release.countDown();
    outbound.close();
    http.stop(0);
    pool.shutdownNow();
  }

  private void answer(HttpExchange exchange) throws IOException {
    ServerCallContext context =
        new ServerCallContext(UnauthenticatedUser.INSTANCE, Map.of(), Set.of());
    String path = exchange.getRequestURI().getPath();
    if (path.equals("/.well-known/agent-card.json")) {
      write(exchange, Utils.OBJECT_MAPPER.writeValueAsString(handler.getAgentCard()));
      return;
    }
    String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
    String method = Utils.OBJECT_MAPPER.readTree(body).path("method").asText();
    Object response =
        switch (method) {
          case "message/send" ->
              handler.onMessageSend(
                  Utils.OBJECT_MAPPER.readValue(body, SendMessageRequest.class), context);
          case "tasks/get" ->
              handler.onGetTask(Utils.OBJECT_MAPPER.readValue(body, GetTaskRequest.class), context);
          case "tasks/cancel" ->
              handler.onCancelTask(
                  Utils.OBJECT_MAPPER.readValue(body, CancelTaskRequest.class), context);
          case "message/stream" -> {
            stream(
                exchange,
                handler.onMessageSendStream(
                    Utils.OBJECT_MAPPER.readValue(body, SendStreamingMessageRequest.class),
                    context));
            yield null;
          }
          default -> throw new IOException("unexpected method " + method);
        };
    if (response != null) {
      write(exchange, Utils.OBJECT_MAPPER.writeValueAsString(response));
    }
  }

  private static void write(HttpExchange exchange, String json) throws IOException {
    byte[] bytes = json.getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().add("Content-Type", "application/json");
    exchange.sendResponseHeaders(200, bytes.length);
    exchange.getResponseBody().write(bytes);
    exchange.close();
  }

  private static void stream(
      HttpExchange exchange, Flow.Publisher<SendStreamingMessageResponse> events)
      throws IOException {
    exchange.getResponseHeaders().add("Content-Type", "text/event-stream");
    exchange.sendResponseHeaders(200, 0);
    OutputStream out = exchange.getResponseBody();
    CountDownLatch done = new CountDownLatch(1);
    events.subscribe(
        new Flow.Subscriber<>() {
          @Override
          public void onSubscribe(Flow.Subscription subscription) {
            subscription.request(Long.MAX_VALUE);
          }

          @Override
          public void onNext(SendStreamingMessageResponse item) {
            try {
              out.write(
                  ("data: " + Utils.OBJECT_MAPPER.writeValueAsString(item) + "\n\n")
                      .getBytes(StandardCharsets.UTF_8));
              out.flush();
            } catch (IOException e) {
              done.countDown();
            }
          }

          @Override
          public void onError(Throwable error) {
            done.countDown();
          }

          @Override
          public void onComplete() {
            done.countDown();
          }
        });
    try {
      done.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    exchange.close();
  }

  private A2aClient.Target target() throws Exception {
    dev.toolhost.a2a.AgentCard card =
        client.card(base.resolve("/.well-known/agent-card.json"), Map.of());
    return new A2aClient.Target(card.endpoint(), card.protocol(), Map.of());
  }

  @Test
  void toolhostReadsTheSdkCardAsProtocol03() throws Exception {
    dev.toolhost.a2a.AgentCard card =
        client.card(base.resolve("/.well-known/agent-card.json"), Map.of());
    assertThat(card.protocol()).isEqualTo(A2aVersion.V0_3);
    assertThat(card.streaming()).isTrue();
    assertThat(card.skills().get(0).examples()).containsExactly("Hear this");
  }

  @Test
  void invokeAgentStreamsFromTheSdkServer() throws Exception {
    A2aConfig.RemoteAgent remote = A2aConfig.RemoteAgent.of("sdk", base);
    AgentDirectory directory =
        new AgentDirectory(
            Map.of("sdk", remote),
            client,
            Duration.ofMinutes(5),
            Map.of(),
            Optional.empty(),
            Clock.systemUTC());
    try (InProcessWorkingMemory memory = new InProcessWorkingMemory();
        A2aTools tools =
            new A2aTools(
                directory, client, A2aConfig.of(Map.of("sdk", remote)), Optional.of(memory))) {
      ExecutableTool invoke =
          tools.tools().stream()
              .filter(t -> t.name().equals("invoke_agent"))
              .findFirst()
              .orElseThrow();
      String arguments = "{\"agent_name\": \"sdk\", \"message\": \"hello there\"}";
      ToolResult result =
          invoke
              .executor()
              .execute(ToolCall.of("invoke_agent", arguments), A2aWire.JSON.readTree(arguments));
      assertThat(((ToolResult.Success) result).content()).isEqualTo("SDK agent heard: hello there");
      String asking = "{\"agent_name\": \"sdk\", \"message\": \"close my account\"}";
      ToolResult input =
          invoke
              .executor()
              .execute(ToolCall.of("invoke_agent", asking), A2aWire.JSON.readTree(asking));
      assertThat(((ToolResult.Success) input).content())
          .contains("input-required", "Which account?");
    }
  }

  @Test
  void sendGetAndTheSdksErrorsForCancelAndUnknownTasks() throws Exception {
    A2aClient.Target target = target();
    A2aEvent sent = client.send(target, A2aMessage.user("quick"), true);
    A2aTask task = ((A2aEvent.TaskSnapshot) sent).task();
    assertThat(task.state()).isEqualTo(TaskState.COMPLETED);
    assertThat(task.text()).isEqualTo("SDK agent heard: quick");
    assertThat(client.get(target, task.id()).state()).isEqualTo(TaskState.COMPLETED);
    assertThatThrownBy(() -> client.cancel(target, task.id()))
        .isInstanceOfSatisfying(A2aException.class, e -> assertThat(e.code()).isEqualTo(-32002));
    assertThatThrownBy(() -> client.get(target, "no-such-task"))
        .isInstanceOfSatisfying(A2aException.class, e -> assertThat(e.code()).isEqualTo(-32001));
  }

  @Test
  void aRunningSdkTaskIsCancelledFromToolhost() throws Exception {
    A2aClient.Target target = target();
    A2aTask task =
        ((A2aEvent.TaskSnapshot) client.send(target, A2aMessage.user("slow work"), false)).task();
    assertThat(task.state()).isIn(TaskState.SUBMITTED, TaskState.WORKING);
    A2aTask cancelled = client.cancel(target, task.id());
    assertThat(cancelled.state()).isEqualTo(TaskState.CANCELED);
  }
}
