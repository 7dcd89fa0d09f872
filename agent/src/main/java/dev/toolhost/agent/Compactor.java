package dev.toolhost.agent;

import dev.toolhost.memory.WorkingMemory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * A compactor fits what one agent sends its model into the model's context window, and shrinks it
 * again when the model refuses it as too long. It never changes a conversation's history: it
 * decides, request by request, what is sent in its place, and remembers that in the conversation's
 * {@link ContextState}.
 *
 * <p>Before every request it counts the request ({@link TokenCounter}). Tool results of turns older
 * than {@link ContextBudget#toolResultTurns} are sent as a digest: one line naming the tool, the
 * result's length, its working-memory key (the whole text is stored there, under {@code
 * session/{id}/context-{call id}}, for {@link #TTL}) and its opening words. When the request passes
 * {@link ContextBudget#compactAt} of the window, every earlier tool result is digested; if that is
 * not enough, the oldest turns are summarised by the agent's own model into one message (folded
 * into the system message, after the instructions) that keeps decisions, facts, open tasks and
 * working-memory keys, leaving the latest turns that fit in half the budget as they were; if the
 * current turn alone is still too large, its largest tool results are digested too. A request still
 * over the window by an exact count is not sent: it is a {@link ModelException} that says what was
 * tried. Each shrinking is told to the run's listener as a {@link Compaction}.
 *
 * <p>When the model refuses a request as too long anyway ({@link #recover}), the window it names
 * (or three quarters of the refused request's count) becomes the conversation's window, the largest
 * tool results are digested until the request fits in the budget, all earlier turns are summarised,
 * and the caller retries once. Thread-safe: a conversation's state is guarded by its own monitor.
 */
final class Compactor {

  /** How long a result moved out of the request stays in working memory: 24 hours. */
  static final Duration TTL = Duration.ofHours(24);

  /** The working-memory category of results moved out of the request. */
  static final String CATEGORY = "context";

  /** What opens the system message of a compaction request: how the model is to summarise. */
  static final String SUMMARY_INSTRUCTIONS =
      "You compact a conversation between a user and an assistant that uses tools. Write one"
          + " summary that will replace the part of the conversation you are given; the assistant"
          + " will see only your summary and the latest turns. Keep, under these headings:\n"
          + "Decisions: every decision made, with what it was about.\n"
          + "Facts: names, numbers, dates, ids and results learned.\n"
          + "Open tasks: what was asked or promised and is not done yet.\n"
          + "Working memory: every working-memory key mentioned (such as session/.../context-...),"
          + " written exactly, with what it holds.\n"
          + "If an earlier summary is given, fold it in and keep everything of it that still"
          + " holds. Leave out small talk and the text of tool results beyond what was learned"
          + " from them. Answer with the summary alone.";

  /** What introduces the summary in the system message. */
  static final String SUMMARY_HEADING =
      "Summary of the earlier conversation (compacted; the host keeps it whole):";

  private static final Logger LOG = LoggerFactory.getLogger(Compactor.class);
  private static final int QUOTE = 160;
  private static final int TRANSCRIPT_ARGUMENTS = 500;
  private static final int TRANSCRIPT_RESULT = 2_000;

  private final AgentDefinition definition;
  private final ModelClient client;
  private final TokenCounter counter;
  private final Optional<WorkingMemory> memory;

  Compactor(
      AgentDefinition definition,
      ModelClient client,
      TokenCounter counter,
      Optional<WorkingMemory> memory) {
    this.definition = Objects.requireNonNull(definition, "definition");
    this.client = Objects.requireNonNull(client, "client");
    this.counter = Objects.requireNonNull(counter, "counter");
    this.memory = Objects.requireNonNull(memory, "memory");
  }

  TokenCounter counter() {
    return counter;
  }

  /**
   * A request's messages as they are to be sent, and their count.
   *
   * @param messages the messages, the system message (instructions and summary) first
   * @param count their tokens, the tools' included
   * @param window the window they were fitted to
   */
  record Prepared(List<ChatMessage> messages, TokenCount count, int window) {}

  /** What one shrinking did, added up as it goes. */
  private static final class Shrunk {
    int summarised;
    int trimmed;
    final List<String> keys = new ArrayList<>();

    boolean any() {
      return summarised > 0 || trimmed > 0;
    }
  }

  /**
   * The messages of the next request of a turn, fitted to the window.
   *
   * @param system the turn's system prompt (instructions and hint), possibly blank
   * @param added the turn's messages so far, not yet in the history
   * @param tools the tools offered
   * @throws ModelException when the request is over the window by an exact count after every
   *     shrinking, or the model cannot write a summary
   */
  Prepared prepare(
      Conversation conversation,
      String system,
      List<ChatMessage> added,
      List<ObjectNode> tools,
      RunListener listener)
      throws InterruptedException {
    ContextState state = conversation.context();
    synchronized (state) {
      List<ChatMessage> history = conversation.history();
      int window = window(state);
      int threshold = threshold(window);
      Shrunk shrunk = new Shrunk();
      ageOut(conversation, state, history, shrunk);
      // Aging out is routine, not a compaction: it is not told.
      shrunk.trimmed = 0;
      shrunk.keys.clear();
      Prepared prepared = view(state, system, history, added, tools, window);
      if (prepared.count().tokens() <= threshold) {
        return prepared;
      }
      TokenCount before = prepared.count();
      trim(
          conversation,
          state,
          history.subList(state.cut, history.size()),
          history,
          added,
          0,
          shrunk);
      prepared = view(state, system, history, added, tools, window);
      if (prepared.count().tokens() > threshold && state.cut < history.size()) {
        int fixed =
            prepared.count().tokens()
                - countMessages(state, replaced(state, history.subList(state.cut, history.size())));
        summarise(state, history, keepFrom(state, history, threshold / 2 - fixed), window, shrunk);
        prepared = view(state, system, history, added, tools, window);
      }
      if (prepared.count().tokens() > threshold) {
        shrinkLargest(
            conversation, state, system, history, added, tools, window, threshold, shrunk);
        prepared = view(state, system, history, added, tools, window);
      }
      if (shrunk.any()) {
        tell(listener, Compaction.Reason.BUDGET, shrunk, before, prepared);
      }
      if (prepared.count().tokens() > window && !prepared.count().estimate()) {
        throw new ModelException(
            "The request to "
                + definition.endpoint().model()
                + " needs "
                + prepared.count()
                + ", more than its context window of "
                + window
                + " tokens, after every earlier turn was summarised and every tool result was"
                + " moved to working memory: this turn's own message is too long for the model."
                + " Send a shorter message, or set a larger context_window if the model has one.",
            0,
            true);
      }
      return prepared;
    }
  }

  /**
   * The messages of the one retry after the model refused {@code refused} as too long: the largest
   * tool results digested, every earlier turn summarised, the window the refusal names kept.
   */
  Prepared recover(
      Conversation conversation,
      String system,
      List<ChatMessage> added,
      List<ObjectNode> tools,
      RunListener listener,
      Prepared refused,
      ModelException overflow)
      throws InterruptedException {
    ContextState state = conversation.context();
    synchronized (state) {
      List<ChatMessage> history = conversation.history();
      OptionalInt named = ModelClient.windowNamedIn(overflow.getMessage());
      int learned =
          named.isPresent() && named.getAsInt() >= ContextBudget.MIN_WINDOW
              ? named.getAsInt()
              : Math.max(ContextBudget.MIN_WINDOW, refused.count().tokens() * 3 / 4);
      if (learned < window(state)) {
        state.learnedWindow = Optional.of(learned);
      }
      int window = window(state);
      int threshold = threshold(window);
      Shrunk shrunk = new Shrunk();
      shrinkLargest(conversation, state, system, history, added, tools, window, threshold, shrunk);
      if (state.cut < history.size()) {
        summarise(state, history, history.size(), window, shrunk);
      }
      Prepared prepared = view(state, system, history, added, tools, window);
      tell(listener, Compaction.Reason.OVERFLOW, shrunk, refused.count(), prepared);
      LOG.info(
          "The model {} refused {} as too long; retrying with {} after digesting {} tool results"
              + " and summarising {} messages",
          definition.endpoint().model(),
          refused.count(),
          prepared.count(),
          shrunk.trimmed,
          shrunk.summarised);
      return prepared;
    }
  }

  /** The error of a second refusal: what was refused, what was tried, what was refused again. */
  ModelException exhausted(ModelException first, ModelException second, Prepared retried) {
    return new ModelException(
        "The model "
            + definition.endpoint().model()
            + " refused the request as longer than its context window twice. After the first"
            + " refusal the loop moved the largest tool results to working memory, summarised"
            + " every earlier turn of the conversation and sent "
            + retried.count()
            + " against a window of "
            + retried.window()
            + " tokens; that was refused too. Set the agent's context_window to the model's real"
            + " window, or start a new conversation. First refusal: "
            + first.getMessage()
            + " Second refusal: "
            + second.getMessage(),
        second.status(),
        true);
  }

  private int window(ContextState state) {
    int configured = definition.context().windowFor(definition.endpoint().model());
    return state.learnedWindow.map(learned -> Math.min(learned, configured)).orElse(configured);
  }

  private int threshold(int window) {
    return (int) (window * definition.context().compactAt());
  }

  private Prepared view(
      ContextState state,
      String system,
      List<ChatMessage> history,
      List<ChatMessage> added,
      List<ObjectNode> tools,
      int window) {
    List<ChatMessage> messages = new ArrayList<>(history.size() - state.cut + added.size() + 1);
    String instructions = system;
    if (!state.summary.isEmpty()) {
      instructions =
          (instructions.isBlank() ? "" : instructions + "\n\n")
              + SUMMARY_HEADING
              + "\n"
              + state.summary;
    }
    if (!instructions.isBlank()) {
      messages.add(new ChatMessage.SystemMessage(instructions));
    }
    messages.addAll(replaced(state, history.subList(state.cut, history.size())));
    messages.addAll(replaced(state, added));
    return new Prepared(messages, counter.count(messages, tools, state.counts(counter)), window);
  }

  private List<ChatMessage> replaced(ContextState state, List<ChatMessage> messages) {
    if (state.digests.isEmpty()) {
      return messages;
    }
    List<ChatMessage> out = new ArrayList<>(messages.size());
    for (ChatMessage message : messages) {
      String digest =
          message instanceof ChatMessage.ToolMessage tool
              ? state.digests.get(tool.toolCallId())
              : null;
      out.add(
          digest == null
              ? message
              : new ChatMessage.ToolMessage(
                  ((ChatMessage.ToolMessage) message).toolCallId(), digest));
    }
    return out;
  }

  private int countMessages(ContextState state, List<ChatMessage> messages) {
    TextCounts counts = state.counts(counter);
    int tokens = 0;
    for (ChatMessage message : messages) {
      tokens += counter.count(message, counts);
    }
    return tokens;
  }

  // Digests the tool results of turns older than the budget's latest turns (the current turn is
  // one of them).
  private void ageOut(
      Conversation conversation, ContextState state, List<ChatMessage> history, Shrunk shrunk) {
    int keep = Math.max(1, definition.context().toolResultTurns());
    int keptFrom = history.size();
    int turns = 1;
    for (int i = history.size() - 1; turns < keep && i >= state.cut; i--) {
      if (history.get(i) instanceof ChatMessage.UserMessage) {
        turns++;
        keptFrom = i;
      }
    }
    if (turns >= keep && keptFrom > state.cut) {
      trim(
          conversation, state, history.subList(state.cut, keptFrom), history, List.of(), 0, shrunk);
    }
  }

  // Digests every tool result of the messages longer than the digest would be.
  private void trim(
      Conversation conversation,
      ContextState state,
      List<ChatMessage> messages,
      List<ChatMessage> history,
      List<ChatMessage> added,
      int atLeast,
      Shrunk shrunk) {
    Map<String, String> names = null;
    for (ChatMessage message : messages) {
      if (message instanceof ChatMessage.ToolMessage tool
          && !state.digests.containsKey(tool.toolCallId())
          && tool.content().length() > Math.max(atLeast, 2 * QUOTE)) {
        if (names == null) {
          names = toolNames(history, added);
        }
        digest(conversation, state, tool, names, shrunk);
      }
    }
  }

  // Digests the current turn's and the history's tool results, largest first, until the request
  // fits in the threshold.
  private void shrinkLargest(
      Conversation conversation,
      ContextState state,
      String system,
      List<ChatMessage> history,
      List<ChatMessage> added,
      List<ObjectNode> tools,
      int window,
      int threshold,
      Shrunk shrunk) {
    List<ChatMessage.ToolMessage> results = new ArrayList<>();
    for (List<ChatMessage> part : List.of(history.subList(state.cut, history.size()), added)) {
      for (ChatMessage message : part) {
        if (message instanceof ChatMessage.ToolMessage tool
            && !state.digests.containsKey(tool.toolCallId())
            && tool.content().length() > 2 * QUOTE) {
          results.add(tool);
        }
      }
    }
    results.sort(
        Comparator.comparingInt((ChatMessage.ToolMessage tool) -> tool.content().length())
            .reversed());
    Map<String, String> names = toolNames(history, added);
    for (ChatMessage.ToolMessage result : results) {
      if (view(state, system, history, added, tools, window).count().tokens() <= threshold) {
        return;
      }
      digest(conversation, state, result, names, shrunk);
    }
  }

  private void digest(
      Conversation conversation,
      ContextState state,
      ChatMessage.ToolMessage tool,
      Map<String, String> names,
      Shrunk shrunk) {
    String name = names.getOrDefault(tool.toolCallId(), "a tool");
    String collapsed = tool.content().strip().replaceAll("\\s+", " ");
    String opening = collapsed.length() > QUOTE ? collapsed.substring(0, QUOTE) + "…" : collapsed;
    String length = tool.content().length() + " chars";
    Optional<String> key = store(conversation, tool);
    String digest =
        key.map(
                stored ->
                    "[Result of "
                        + name
                        + " ("
                        + length
                        + ") moved out of the conversation to save room: it is in working memory"
                        + " at `"
                        + stored
                        + "`; read it with get_from_working_memory. It begins: "
                        + opening
                        + "]")
            .orElse(
                "[Result of "
                    + name
                    + " ("
                    + length
                    + ") left out of the conversation to save room; call the tool again if you"
                    + " need it. It began: "
                    + opening
                    + "]");
    state.digests.put(tool.toolCallId(), digest);
    shrunk.trimmed++;
    key.ifPresent(shrunk.keys::add);
  }

  private Optional<String> store(Conversation conversation, ChatMessage.ToolMessage tool) {
    if (memory.isEmpty()) {
      return Optional.empty();
    }
    String key =
        WorkingMemory.sessionNamespace(conversation.sessionId())
            + "/context-"
            + tool.toolCallId().replaceAll("[^A-Za-z0-9_-]", "_");
    try {
      memory.get().put(key, tool.content(), TTL, CATEGORY);
      return Optional.of(key);
    } catch (RuntimeException e) {
      LOG.warn(
          "Working memory could not keep a tool result moved out of the request at {}", key, e);
      return Optional.empty();
    }
  }

  private static Map<String, String> toolNames(List<ChatMessage> history, List<ChatMessage> added) {
    Map<String, String> names = new HashMap<>();
    for (List<ChatMessage> part : List.of(history, added)) {
      for (ChatMessage message : part) {
        if (message instanceof ChatMessage.AssistantMessage assistant) {
          for (ModelToolCall call : assistant.toolCalls()) {
            names.put(call.id(), "'" + call.name() + "'");
          }
        }
      }
    }
    return names;
  }

  // Where the kept tail starts: the latest turns whose messages fit in the budget; the history's
  // end when none fits, and never before the cut.
  private int keepFrom(ContextState state, List<ChatMessage> history, int budget) {
    int keepFrom = history.size();
    int tail = 0;
    for (int i = history.size() - 1; i >= state.cut; i--) {
      if (history.get(i) instanceof ChatMessage.UserMessage) {
        int tokens = countMessages(state, replaced(state, history.subList(i, keepFrom)));
        if (tail + tokens > budget) {
          break;
        }
        tail += tokens;
        keepFrom = i;
      }
    }
    // Nothing to summarise under the budget: the excess is elsewhere; summarise it all.
    return keepFrom <= state.cut ? history.size() : keepFrom;
  }

  // Folds the history from the cut up to the given index into the summary, in pieces that each
  // fit in half the window, and moves the cut there.
  private void summarise(
      ContextState state, List<ChatMessage> history, int upTo, int window, Shrunk shrunk)
      throws InterruptedException {
    if (upTo <= state.cut) {
      return;
    }
    List<ChatMessage> folded = replaced(state, history.subList(state.cut, upTo));
    Map<String, String> names = toolNames(history, List.of());
    int words = Math.max(100, window / 8);
    String instructions = SUMMARY_INSTRUCTIONS + " Keep the summary under " + words + " words.";
    TextCounts counts = state.counts(counter);
    int pieceBudget =
        Math.max(256, window / 2 - counts.count(instructions) - counts.count(state.summary) - 64);
    String summary = state.summary;
    StringBuilder piece = new StringBuilder();
    int pieceTokens = 0;
    for (ChatMessage message : folded) {
      String line = transcriptLine(message, names);
      int tokens = counter.count(line);
      if (tokens > pieceBudget) {
        // One message larger than a piece: its opening stands for it.
        line = line.substring(0, Math.min(line.length(), pieceBudget)) + " [cut]";
        tokens = counter.count(line);
      }
      if (pieceTokens + tokens > pieceBudget && !piece.isEmpty()) {
        summary = fold(instructions, summary, piece.toString());
        piece.setLength(0);
        pieceTokens = 0;
      }
      piece.append(line).append('\n');
      pieceTokens += tokens;
    }
    if (!piece.isEmpty()) {
      summary = fold(instructions, summary, piece.toString());
    }
    shrunk.summarised += upTo - state.cut;
    state.summary = summary;
    state.cut = upTo;
  }

  private String fold(String instructions, String summary, String transcript)
      throws InterruptedException {
    String text =
        (summary.isEmpty() ? "" : "Earlier summary:\n" + summary + "\n\n")
            + "Conversation to fold in:\n"
            + transcript;
    ModelRequest request =
        new ModelRequest(
            List.of(new ChatMessage.SystemMessage(instructions), new ChatMessage.UserMessage(text)),
            List.of(),
            ModelRequest.ToolChoice.NONE,
            false);
    String written = client.complete(request, ModelListener.NONE).content().orElse("").strip();
    if (written.isEmpty()) {
      throw new ModelException(
          "The model "
              + definition.endpoint().model()
              + " answered a request to summarise the conversation's earlier turns with no text,"
              + " so the conversation could not be fitted to its context window.",
          0);
    }
    return written;
  }

  private static String transcriptLine(ChatMessage message, Map<String, String> names) {
    return switch (message) {
      case ChatMessage.SystemMessage system -> "";
      case ChatMessage.UserMessage user -> "User: " + user.content();
      case ChatMessage.AssistantMessage assistant -> {
        StringBuilder line = new StringBuilder("Assistant:");
        assistant.content().ifPresent(text -> line.append(' ').append(text));
        for (ModelToolCall call : assistant.toolCalls()) {
          line.append(" [called ")
              .append(call.name())
              .append(' ')
              .append(cut(call.arguments(), TRANSCRIPT_ARGUMENTS))
              .append(']');
        }
        yield line.toString();
      }
      case ChatMessage.ToolMessage tool ->
          "Result of "
              + names.getOrDefault(tool.toolCallId(), "a tool")
              + ": "
              + cut(tool.content(), TRANSCRIPT_RESULT);
    };
  }

  private static String cut(String text, int length) {
    return text.length() <= length ? text : text.substring(0, length) + " [cut]";
  }

  private void tell(
      RunListener listener,
      Compaction.Reason reason,
      Shrunk shrunk,
      TokenCount before,
      Prepared after) {
    listener.onCompaction(
        new Compaction(
            reason,
            shrunk.summarised,
            shrunk.trimmed,
            shrunk.keys,
            before,
            after.count(),
            after.window()));
  }
}
