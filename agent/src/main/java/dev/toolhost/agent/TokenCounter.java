package dev.toolhost.agent;

import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingRegistry;
import com.knuddels.jtokkit.api.EncodingType;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import tools.jackson.databind.node.ObjectNode;

/**
 * A token counter counts the tokens of a model request before it is sent: exactly, with OpenAI's
 * own encoding (jtokkit's {@code o200k_base} or {@code cl100k_base}) for OpenAI's models, and as an
 * estimate for every other model, whose tokenizer is not at hand.
 *
 * <p>The estimate is one token per three ASCII characters and one per other character: it errs high
 * for English prose (about four characters a token) and JSON, so that a budget kept by it is kept
 * by the real count too; every count it makes says it is an estimate. A request's count adds the
 * per-message framing OpenAI documents (four tokens a message, three to prime the answer) and the
 * tools' JSON. Thread-safe; the encodings are loaded once, on first use.
 */
public final class TokenCounter {

  private static final int PER_MESSAGE = 4;
  private static final int PER_CALL = 4;
  private static final int PRIMING = 3;

  private final Optional<Encoding> encoding;

  private TokenCounter(Optional<Encoding> encoding) {
    this.encoding = encoding;
  }

  /** The counter for a model: exact for OpenAI's models, an estimate for the others. */
  public static TokenCounter forModel(String model) {
    return new TokenCounter(encodingType(model).map(type -> Registry.REGISTRY.getEncoding(type)));
  }

  /** A counter that estimates, whatever the model. */
  public static TokenCounter estimating() {
    return new TokenCounter(Optional.empty());
  }

  /** Whether this counter's counts are estimates. */
  public boolean estimates() {
    return encoding.isEmpty();
  }

  /** The encoding's name, such as {@code o200k_base}, or {@code estimate}. */
  public String encodingName() {
    return encoding.map(Encoding::getName).orElse("estimate");
  }

  /** The tokens of a text. */
  public int count(String text) {
    if (text.isEmpty()) {
      return 0;
    }
    if (encoding.isPresent()) {
      // Ordinary: a model's or a user's text that spells a special token is text, not that token.
      return encoding.get().countTokensOrdinary(text);
    }
    int ascii = 0;
    int other = 0;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c < 0x80) {
        ascii++;
      } else if (!Character.isLowSurrogate(c)) {
        other++;
      }
    }
    return (ascii + 2) / 3 + other;
  }

  /**
   * The tokens of one message in a request, its framing included, counting texts with the cache.
   */
  int count(ChatMessage message, TextCounts cache) {
    return PER_MESSAGE
        + switch (message) {
          case ChatMessage.SystemMessage system -> cache.count(system.content());
          case ChatMessage.UserMessage user -> cache.count(user.content());
          case ChatMessage.ToolMessage tool ->
              cache.count(tool.content()) + cache.count(tool.toolCallId());
          case ChatMessage.AssistantMessage assistant -> {
            int tokens = assistant.content().map(cache::count).orElse(0);
            for (ModelToolCall call : assistant.toolCalls()) {
              tokens +=
                  PER_CALL
                      + cache.count(call.id())
                      + cache.count(call.name())
                      + cache.count(call.arguments());
            }
            yield tokens;
          }
        };
  }

  /** The tokens of a whole request: its messages, its tools and the answer's priming. */
  TokenCount count(List<ChatMessage> messages, List<ObjectNode> tools, TextCounts cache) {
    int tokens = PRIMING;
    for (ChatMessage message : messages) {
      tokens += count(message, cache);
    }
    if (!tools.isEmpty()) {
      tokens += cache.count(tools.toString());
    }
    return new TokenCount(tokens, estimates());
  }

  /** The tokens of a whole request, counted without a cache. */
  public TokenCount count(ModelRequest request) {
    return count(request.messages(), request.tools(), new TextCounts(this, 0));
  }

  // OpenAI's models by name, a vendor prefix (openai/) ignored: o200k_base from GPT-4o on, and
  // cl100k_base for GPT-4 and GPT-3.5. Anything else has a tokenizer of its own.
  private static Optional<EncodingType> encodingType(String model) {
    String name = model.toLowerCase(Locale.ROOT);
    name = name.substring(name.lastIndexOf('/') + 1);
    if (name.startsWith("gpt-4o")
        || name.startsWith("chatgpt-4o")
        || name.startsWith("gpt-4.1")
        || name.startsWith("gpt-4.5")
        || name.startsWith("gpt-5")
        || name.startsWith("gpt-oss")
        || name.matches("o[1-9](-.*)?")) {
      return Optional.of(EncodingType.O200K_BASE);
    }
    if (name.startsWith("gpt-4") || name.startsWith("gpt-3.5")) {
      return Optional.of(EncodingType.CL100K_BASE);
    }
    return Optional.empty();
  }

  /** The encodings, loaded when first asked for. */
  private static final class Registry {
    static final EncodingRegistry REGISTRY = Encodings.newLazyEncodingRegistry();
  }
}
