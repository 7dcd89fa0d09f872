package dev.toolhost.springai;

import dev.toolhost.testing.ToolAdapterContract;
import java.time.Duration;
import java.util.Map;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.chat.memory.ChatMemory;
import org.springframework.ai.openai.OpenAiChatModel;
import org.springframework.ai.openai.OpenAiChatOptions;

/**
 * The adapter contract on a real Spring AI {@link ChatClient}, on Spring AI's OpenAI chat model
 * built by hand (no Spring Boot), with its tools offered by a {@link ToolSetCallbackProvider}.
 */
class ToolSetCallbackProviderTest extends ToolAdapterContract {

  // The user is the conversation id in the tool context.
  @Override
  protected String chat(String user, String question) {
    OpenAiChatModel chatModel =
        OpenAiChatModel.builder()
            .options(
                OpenAiChatOptions.builder()
                    .baseUrl(model.baseUrl().toString())
                    .apiKey("test-key")
                    .model("gpt-test")
                    .timeout(Duration.ofSeconds(10))
                    .maxRetries(0)
                    .build())
            .build();
    return ChatClient.create(chatModel)
        .prompt()
        .user(question)
        .tools(ToolSetCallbackProvider.of(toolSet(), dispatcher))
        .toolContext(Map.of(ChatMemory.CONVERSATION_ID, user))
        .call()
        .content();
  }

  // Spring AI resolves a call's callbacks once, when the call starts.
  @Override
  protected boolean offersToolsRegisteredDuringACall() {
    return false;
  }
}
