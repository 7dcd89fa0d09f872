package dev.toolhost.a2a;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.a2a.A2A;
import io.a2a.client.transport.jsonrpc.JSONRPCTransport;
import io.a2a.spec.A2AClientException;
import io.a2a.spec.AgentCard;
import io.a2a.spec.EventKind;
import io.a2a.spec.MessageSendConfiguration;
import io.a2a.spec.MessageSendParams;
import io.a2a.spec.StreamingEventKind;
import io.a2a.spec.Task;
import io.a2a.spec.TaskArtifactUpdateEvent;
import io.a2a.spec.TaskIdParams;
import io.a2a.spec.TaskQueryParams;
import io.a2a.spec.TaskState;
import io.a2a.spec.TaskStatusUpdateEvent;
import io.a2a.spec.TextPart;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Interop: the official A2A Java SDK (io.github.a2asdk 0.3.3.Final, protocol 0.3, its own Jackson 2
 * JSON) as a client of Toolhost's A2A server. It reads the card, sends, streams, gets and cancels,
 * and reads the server's errors as its own types.
 */
@Timeout(30)
class SdkClientInteropTest {

  private A2aServer server;
  private RouteServer http;

  @BeforeEach
  void start() throws Exception {
    server =
        new A2aServer(
            new A2aConfig.Server(URI.create("http://placeholder"), 100, Duration.ofSeconds(5)),
            A2aServerTest::jester,
            (agent, context, principal, message) -> "Knock knock: " + message);
    http = new RouteServer(server.routes());
  }

  @AfterEach
  void stop() throws Exception {
    http.close();
    server.close();
  }

  private String agentUrl() {
    return http.base() + "/a2a/jester";
  }

  private static MessageSendParams params(String text) {
    return new MessageSendParams(
        A2A.toUserMessage(text),
        new MessageSendConfiguration(List.of("text/plain"), null, null, true),
        null);
  }

  private static String text(Task task) {
    return ((TextPart) task.getArtifacts().get(0).parts().get(0)).getText();
  }

  @Test
  void theSdkReadsTheCard() throws Exception {
    // The SDK resolves the card's path from the server's root; the agent's card is under its path.
    AgentCard card =
        A2A.getAgentCard(
            http.base().toString(), "a2a/jester/.well-known/agent-card.json", java.util.Map.of());
    assertThat(card.name()).isEqualTo("jester");
    assertThat(card.skills()).extracting(s -> s.id()).containsExactly("joke");
    assertThat(card.skills().get(0).examples()).containsExactly("Tell me a joke");
    assertThat(card.capabilities().streaming()).isTrue();
  }

  @Test
  void theSdkSendsGetsAndIsRefusedACancelOfAFinishedTask() throws Exception {
    JSONRPCTransport transport = new JSONRPCTransport(agentUrl());
    EventKind answer = transport.sendMessage(params("who is there"), null);
    assertThat(answer).isInstanceOf(Task.class);
    Task task = (Task) answer;
    assertThat(task.getStatus().state()).isEqualTo(TaskState.COMPLETED);
    assertThat(text(task)).isEqualTo("Knock knock: who is there");

    Task got = transport.getTask(new TaskQueryParams(task.getId()), null);
    assertThat(got.getStatus().state()).isEqualTo(TaskState.COMPLETED);
    assertThat(got.getContextId()).isEqualTo(task.getContextId());

    assertThatThrownBy(() -> transport.cancelTask(new TaskIdParams(task.getId()), null))
        .isInstanceOf(A2AClientException.class)
        .hasMessageContaining("cannot be canceled");
    assertThatThrownBy(() -> transport.getTask(new TaskQueryParams("no-such-task"), null))
        .isInstanceOf(A2AClientException.class)
        .hasMessageContaining("not found");
  }

  @Test
  void theSdkStreamsToTheFinalStatus() throws Exception {
    JSONRPCTransport transport = new JSONRPCTransport(agentUrl());
    List<StreamingEventKind> events = new CopyOnWriteArrayList<>();
    List<Throwable> errors = new CopyOnWriteArrayList<>();
    CountDownLatch ended = new CountDownLatch(1);
    transport.sendMessageStreaming(
        params("stream it"),
        event -> {
          events.add(event);
          if (event instanceof TaskStatusUpdateEvent update && update.isFinal()) {
            ended.countDown();
          }
        },
        error -> {
          // The SDK cancels its request once it has read the final event, and reports that too.
          if (ended.getCount() > 0) {
            errors.add(error);
          }
          ended.countDown();
        },
        null);
    assertThat(ended.await(10, TimeUnit.SECONDS)).isTrue();
    assertThat(errors).isEmpty();
    assertThat(events.get(0)).isInstanceOf(Task.class);
    assertThat(events).anySatisfy(e -> assertThat(e).isInstanceOf(TaskArtifactUpdateEvent.class));
    TaskStatusUpdateEvent last = (TaskStatusUpdateEvent) events.get(events.size() - 1);
    assertThat(last.getStatus().state()).isEqualTo(TaskState.COMPLETED);
  }
}
