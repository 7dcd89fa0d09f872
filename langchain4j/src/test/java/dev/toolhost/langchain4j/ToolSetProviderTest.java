package dev.toolhost.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;

import dev.langchain4j.memory.chat.MessageWindowChatMemory;
import dev.langchain4j.model.chat.request.json.JsonObjectSchema;
import dev.langchain4j.model.chat.request.json.JsonRawSchema;
import dev.langchain4j.model.openai.OpenAiChatModel;
import dev.langchain4j.service.AiServices;
import dev.langchain4j.service.MemoryId;
import dev.langchain4j.service.UserMessage;
import dev.toolhost.core.ToolSpec;
import dev.toolhost.testing.ScriptedReply;
import dev.toolhost.testing.ToolAdapterContract;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

/**
 * The adapter contract on a real LangChain4j {@code AiServices} agent, on LangChain4j's OpenAI chat
 * model, with its tools offered by a {@link ToolSetProvider}.
 */
class ToolSetProviderTest extends ToolAdapterContract {

  interface Assistant {
    String chat(@MemoryId String user, @UserMessage String message);
  }

  @Override
  protected String chat(String user, String question) {
    OpenAiChatModel chatModel =
        OpenAiChatModel.builder()
            .baseUrl(model.baseUrl().toString())
            .apiKey("test-key")
            .modelName("gpt-test")
            .timeout(Duration.ofSeconds(10))
            .maxRetries(0)
            .build();
    return AiServices.builder(Assistant.class)
        .chatModel(chatModel)
        .chatMemoryProvider(id -> MessageWindowChatMemory.withMaxMessages(20))
        .toolProvider(ToolSetProvider.of(toolSet(), dispatcher))
        .build()
        .chat(user, question);
  }

  // LangChain4j's OpenAI model sends a top-level additionalProperties only in strict mode; the
  // dispatcher enforces it all the same. Everything else arrives exactly as written.
  @Override
  protected ObjectNode schemaAsSent(ObjectNode declared) {
    declared.remove("additionalProperties");
    return declared;
  }

  // AiServices asks the tool provider before each model request.
  @Override
  protected boolean offersToolsRegisteredDuringACall() {
    return true;
  }

  @Test
  void theToolsAreNotSentInStrictMode() {
    model.enqueue(ScriptedReply.answer("Nothing to do."));

    chat("alice", "Hello");

    model
        .takeRequest()
        .json()
        .path("tools")
        .forEach(tool -> assertThat(tool.path("function").has("strict")).isFalse());
  }

  @Test
  void aBooleanSchemaBecomesItsObjectForm() {
    ObjectNode schema =
        (ObjectNode)
            JsonMapper.shared()
                .readTree(
                    "{\"type\": \"object\", \"properties\": {\"anything\": true, \"nothing\": false}}");

    JsonObjectSchema parameters =
        ToolSetProvider.specification(new ToolSpec("probe", "Probes.", schema, "builtin:test"))
            .parameters();

    assertThat(parameters.properties())
        .containsEntry("anything", JsonRawSchema.from("{}"))
        .containsEntry("nothing", JsonRawSchema.from("{\"not\": {}}"));
  }
}
