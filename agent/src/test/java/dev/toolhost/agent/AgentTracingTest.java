package dev.toolhost.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.toolhost.core.MethodTools;
import dev.toolhost.core.ToolDispatcher;
import dev.toolhost.core.ToolProfiles;
import dev.toolhost.core.ToolRegistry;
import dev.toolhost.core.ToolSet;
import dev.toolhost.testing.ScriptedModelServer;
import dev.toolhost.testing.ScriptedReply;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The agent loop's spans, on a real OpenTelemetry SDK, against a model server that answers in the
 * OpenAI streaming format.
 */
@Timeout(30)
class AgentTracingTest {

  private final ScriptedModelServer server = ScriptedModelServer.start();
  private final InMemorySpanExporter spans = InMemorySpanExporter.create();
  private final OpenTelemetrySdk openTelemetry =
      OpenTelemetrySdk.builder()
          .setTracerProvider(
              SdkTracerProvider.builder()
                  .addSpanProcessor(SimpleSpanProcessor.create(spans))
                  .build())
          .build();
  private final ToolRegistry registry = new ToolRegistry();
  private final ModelClient client =
      ModelClient.builder(new ModelEndpoint(server.baseUrl(), "gpt-traced", "KEY"))
          .environment(Map.of())
          .build();
  private final ToolDispatcher dispatcher =
      ToolDispatcher.builder().openTelemetry(openTelemetry).build();

  AgentTracingTest() {
    registry.registerAll(MethodTools.of(new AgentLoopTest.Weather(), "builtin:weather"));
  }

  @AfterEach
  void close() {
    client.close();
    server.close();
    openTelemetry.close();
  }

  private Agent agent(RunLimits limits) {
    return new Agent(
        AgentDefinition.of("assistant", client.endpoint())
            .withDescription("Answers questions.")
            .withLimits(limits),
        client,
        dispatcher);
  }

  private static Conversation conversation() {
    return Conversation.of("session-7", ToolSet.of(new ToolRegistry(), ToolProfiles.MAIN));
  }

  private SpanData named(String name) {
    return spans.getFinishedSpanItems().stream()
        .filter(span -> span.getName().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no span " + name + " in " + spans));
  }

  @Test
  void aRunIsOneSpanWithItsModelRequestsAndToolCallsSideBySideUnderIt() {
    server.enqueue(
        ScriptedReply.toolCalls(
            ScriptedReply.call("call_1", "get_weather", "{\"city\":\"Oslo\"}")));
    server.enqueue(ScriptedReply.answer("Sunny in Oslo."));
    Conversation conversation =
        Conversation.of("session-7", ToolSet.of(registry, ToolProfiles.MAIN));

    RunResult result = agent(RunLimits.DEFAULT).run(conversation, "Weather?", RunListener.NONE);

    assertThat(result.stop()).isEqualTo(RunResult.Stop.COMPLETED);
    SpanData run = named("invoke_agent assistant");
    List<SpanData> chats =
        spans.getFinishedSpanItems().stream()
            .filter(span -> span.getName().equals("chat gpt-traced"))
            .toList();
    SpanData tool = named("execute_tool get_weather");
    assertThat(chats).hasSize(2);
    assertThat(run.getParentSpanContext().isValid()).isFalse();
    assertThat(chats)
        .allSatisfy(chat -> assertThat(chat.getParentSpanId()).isEqualTo(run.getSpanId()));
    assertThat(tool.getParentSpanId()).isEqualTo(run.getSpanId());
    assertThat(run.getKind()).isEqualTo(SpanKind.INTERNAL);
    assertThat(run.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
    assertThat(run.getAttributes().asMap())
        .containsEntry(AttributeKey.stringKey("gen_ai.operation.name"), "invoke_agent")
        .containsEntry(AttributeKey.stringKey("gen_ai.provider.name"), "openai")
        .containsEntry(AttributeKey.stringKey("gen_ai.agent.name"), "assistant")
        .containsEntry(AttributeKey.stringKey("gen_ai.agent.description"), "Answers questions.")
        .containsEntry(AttributeKey.stringKey("gen_ai.conversation.id"), "session-7")
        .containsEntry(AttributeKey.stringKey("gen_ai.request.model"), "gpt-traced");
    SpanData first = chats.getFirst();
    assertThat(first.getKind()).isEqualTo(SpanKind.CLIENT);
    assertThat(first.getAttributes().asMap())
        .containsEntry(AttributeKey.stringKey("gen_ai.operation.name"), "chat")
        .containsEntry(AttributeKey.stringKey("gen_ai.request.model"), "gpt-traced")
        .containsEntry(AttributeKey.stringKey("server.address"), server.baseUrl().getHost())
        .containsEntry(AttributeKey.longKey("server.port"), (long) server.baseUrl().getPort())
        .containsEntry(
            AttributeKey.stringArrayKey("gen_ai.response.finish_reasons"), List.of("tool_calls"));
    assertThat(
            chats
                .getLast()
                .getAttributes()
                .get(AttributeKey.stringArrayKey("gen_ai.response.finish_reasons")))
        .containsExactly("stop");
    // Nothing the user or the model said is on any span.
    assertThat(spans.getFinishedSpanItems())
        .allSatisfy(
            span ->
                assertThat(span.getAttributes().asMap().values().toString())
                    .doesNotContain("Weather?")
                    .doesNotContain("Sunny in Oslo")
                    .doesNotContain("Oslo"));
  }

  @Test
  void aRunThatTimesOutSaysSoOnItsSpan() {
    server.enqueue(ScriptedReply.stream().pause(Duration.ofSeconds(20)).done().build());

    RunResult result =
        agent(new RunLimits(5, 5, Duration.ofMillis(300)))
            .run(conversation(), "Take your time.", RunListener.NONE);

    assertThat(result.stop()).isEqualTo(RunResult.Stop.TIMEOUT);
    SpanData run = named("invoke_agent assistant");
    assertThat(run.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    assertThat(run.getAttributes().get(AttributeKey.stringKey("error.type"))).isEqualTo("timeout");
    SpanData chat = named("chat gpt-traced");
    assertThat(chat.getParentSpanId()).isEqualTo(run.getSpanId());
    assertThat(chat.getAttributes().get(AttributeKey.stringKey("error.type")))
        .isEqualTo("cancelled");
  }

  @Test
  void aModelThatRefusesTheRequestIsAnErrorOnTheChatSpanNamingTheStatus() {
    server.enqueue(ScriptedReply.status(404, "{\"error\": {\"message\": \"no such model\"}}"));

    try {
      agent(RunLimits.DEFAULT).run(conversation(), "Hello?", RunListener.NONE);
    } catch (ModelException expected) {
      // The run fails with the model's refusal; its spans say why.
    }

    SpanData chat = named("chat gpt-traced");
    assertThat(chat.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    assertThat(chat.getAttributes().get(AttributeKey.stringKey("error.type"))).isEqualTo("404");
    assertThat(chat.getStatus().getDescription()).doesNotContain("no such model");
    SpanData run = named("invoke_agent assistant");
    assertThat(run.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
  }
}
