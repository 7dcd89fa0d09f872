package dev.toolhost.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class TokenCounterTest {

  @Test
  void openAiModelsAreCountedWithTheirOwnEncoding() {
    assertThat(TokenCounter.forModel("gpt-4o-mini").encodingName()).isEqualTo("o200k_base");
    assertThat(TokenCounter.forModel("openai/gpt-4.1").encodingName()).isEqualTo("o200k_base");
    assertThat(TokenCounter.forModel("o3-mini").encodingName()).isEqualTo("o200k_base");
    assertThat(TokenCounter.forModel("gpt-4-turbo").encodingName()).isEqualTo("cl100k_base");
    assertThat(TokenCounter.forModel("gpt-3.5-turbo").encodingName()).isEqualTo("cl100k_base");
    // "hello world" is two tokens in both encodings.
    assertThat(TokenCounter.forModel("gpt-4o").count("hello world")).isEqualTo(2);
    assertThat(TokenCounter.forModel("gpt-4o").estimates()).isFalse();
  }

  @Test
  void otherModelsAreEstimatedAndTheCountSaysSo() {
    TokenCounter counter = TokenCounter.forModel("llama3.1:8b");
    assertThat(counter.estimates()).isTrue();
    assertThat(counter.encodingName()).isEqualTo("estimate");
    assertThat(counter.count("abcdefghi")).isEqualTo(3);
    assertThat(counter.count("日本語")).isEqualTo(3);
    TokenCount count =
        counter.count(
            new ModelRequest(
                List.of(new ChatMessage.UserMessage("abcdefghi")),
                List.of(),
                ModelRequest.ToolChoice.AUTO,
                true));
    assertThat(count.estimate()).isTrue();
    assertThat(count.toString()).isEqualTo("about 10 tokens (estimated)");
  }

  @Test
  void anEstimateErrsHighAgainstTheRealCountOfProse() {
    String prose = "The quick brown fox jumps over the lazy dog, and then it rests. ".repeat(50);
    assertThat(TokenCounter.estimating().count(prose))
        .isGreaterThan(TokenCounter.forModel("gpt-4o").count(prose));
  }

  @Test
  void aWellKnownModelHasItsWindowAndAConfiguredOneWins() {
    assertThat(ContextBudget.knownWindow("gpt-4o-mini")).hasValue(128_000);
    assertThat(ContextBudget.knownWindow("gpt-4")).hasValue(8_192);
    assertThat(ContextBudget.knownWindow("openai/gpt-4.1-mini")).hasValue(1_047_576);
    assertThat(ContextBudget.knownWindow("llama3.1:8b")).hasValue(131_072);
    assertThat(ContextBudget.knownWindow("Qwen/Qwen2.5-7B-Instruct")).hasValue(32_768);
    assertThat(ContextBudget.knownWindow("my-own-model")).isEmpty();
    assertThat(ContextBudget.DEFAULT.windowFor("my-own-model"))
        .isEqualTo(ContextBudget.UNKNOWN_MODEL_WINDOW);
    assertThat(ContextBudget.DEFAULT.withWindow(16_384).windowFor("gpt-4o")).isEqualTo(16_384);
  }

  @Test
  void aBudgetOutsideItsBoundsNamesWhatIsWrong() {
    assertThatThrownBy(() -> new ContextBudget(Optional.of(100), 0.75, 3))
        .hasMessageContaining("at least 1024 tokens, not 100");
    assertThatThrownBy(() -> ContextBudget.DEFAULT.withCompactAt(1.5))
        .hasMessageContaining("0.1 to 0.95, not 1.5");
  }
}
