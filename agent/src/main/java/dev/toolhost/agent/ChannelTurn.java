package dev.toolhost.agent;

import dev.toolhost.core.ErrorCode;
import dev.toolhost.core.ExecutableTool;
import dev.toolhost.core.Redactor;
import dev.toolhost.core.ToolExecutor;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.ToolSpec;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

/**
 * A channel turn is the tools of one conversation turn with its user, bound to that turn alone
 * (Spacebot's channel tools): {@code reply} sends a message now, {@code skip} ends the turn with no
 * message, {@code react} puts an emoji on the user's message, {@code route} sends a follow-up to a
 * subagent of the conversation, and {@code cancel} stops one.
 *
 * <p>Pass it to {@link Agent#run(Conversation, String, RunListener, ChannelTurn)}: its tools are
 * added for that turn and removed when it ends, so a later call is {@code tool_not_found}; once
 * {@link #close() closed} the tools themselves refuse too, so a stale turn never sends. What the
 * turn did is read after the run: {@link #replies()}, {@link #reactions()}, {@link #skipped()}. A
 * listener hears each as it happens, on the tool's thread.
 *
 * <p>{@code reply} refuses text in which the host's secret scanner finds a secret. {@code route} to
 * a running subagent joins its run before its next model request; to an idle one (finished, its
 * conversation kept) it runs again; to one that failed or was cancelled it answers {@code routed:
 * false}; an unknown id is an error saying it may have completed or been cancelled. {@code cancel}
 * stops a subagent at once. Toolhost runs no branches, so {@code subagent} is the one process type.
 * Thread-safe: the model may call several tools of one turn at once.
 */
public final class ChannelTurn implements AutoCloseable {

  /** The source of the channel tools. */
  public static final String SOURCE = ReplyTool.SOURCE;

  /** The channel tools' names, in the order they are offered. */
  public static final List<String> NAMES = List.of("reply", "skip", "react", "route", "cancel");

  /** The process type {@code cancel} takes: the one kind of process a conversation starts. */
  public static final String SUBAGENT = "subagent";

  // One emoji (with its modifiers, joiners and keycaps) or a short code such as :thumbsup:.
  private static final Pattern SHORT_CODE = Pattern.compile(":[a-z0-9_+-]{1,64}:");
  private static final int MAX_EMOJI_CODE_POINTS = 16;

  /** What hears a channel turn as it goes; every method is called on the tool's thread. */
  public interface Listener {
    /** A listener that ignores everything. */
    Listener NONE = new Listener() {};

    /** A message the model sent the user with {@code reply}. */
    default void onReply(String content) {}

    /** A reaction the model put on the user's message. */
    default void onReaction(String emoji) {}

    /** The model chose to say nothing this turn; the reason is empty when it gave none. */
    default void onSkip(String reason) {}
  }

  private final Conversation conversation;
  private final Optional<Subagents> subagents;
  private final Listener listener;
  private final ReplyTool reply;
  private final AtomicBoolean open = new AtomicBoolean(true);
  private final AtomicBoolean skipped = new AtomicBoolean();
  private final List<String> replies = new ArrayList<>();
  private final LinkedHashSet<String> reactions = new LinkedHashSet<>();
  private volatile String skipReason = "";
  private final List<ExecutableTool> tools;

  private ChannelTurn(
      Conversation conversation,
      Optional<Subagents> subagents,
      Redactor redactor,
      Listener listener) {
    this.conversation = Objects.requireNonNull(conversation, "conversation");
    this.subagents = Objects.requireNonNull(subagents, "subagents");
    this.listener = Objects.requireNonNull(listener, "listener");
    this.reply =
        new ReplyTool(
            content -> {
              synchronized (replies) {
                replies.add(content);
              }
              listener.onReply(content);
            },
            redactor);
    this.tools =
        List.of(
            reply.tool(),
            tool(
                "skip",
                "Ends this turn without any message to the user, when nothing needs saying (a"
                    + " message not meant for you, a thanks). Can be combined with react.",
                schema().with("reason", "Why you stay silent, for the log.").build(),
                (call, arguments) -> skip(arguments)),
            tool(
                "react",
                "Adds an emoji reaction to the user's message, such as 👍 or :eyes:. Can be"
                    + " combined with reply or skip.",
                schema()
                    .with("emoji", "One emoji, or a short code such as :thumbsup:.")
                    .needs()
                    .build(),
                (call, arguments) -> react(arguments.get("emoji").asString())),
            tool(
                "route",
                "Sends a follow-up message to one of this conversation's subagents: a running one"
                    + " hears it before its next step, an idle one runs again with it.",
                schema()
                    .with("worker_id", "The subagent's id, such as sub-1.")
                    .with("message", "The follow-up: new information or a changed request.")
                    .needs()
                    .build(),
                (call, arguments) ->
                    route(
                        arguments.get("worker_id").asString(),
                        arguments.get("message").asString())),
            tool(
                "cancel",
                "Stops one of this conversation's subagents at once.",
                schema()
                    .withEnum("process_type", "What to stop: a subagent.", SUBAGENT)
                    .with("process_id", "Its id, such as sub-1.")
                    .with("reason", "Why, in a few words; it is shown with the cancellation.")
                    .needs("process_type", "process_id")
                    .build(),
                (call, arguments) ->
                    cancel(
                        arguments.get("process_id").asString(),
                        Optional.ofNullable(arguments.get("reason")).map(JsonNode::asString))));
  }

  /**
   * The channel tools of one turn of a conversation of these agents: {@code route} and {@code
   * cancel} reach the subagents it spawned, and {@code reply} refuses secrets the agents' redactor
   * (the host's secret scanner) finds.
   */
  public static ChannelTurn open(Agents agents, Conversation conversation, Listener listener) {
    return new ChannelTurn(
        conversation, Optional.of(agents.subagents()), agents.redactor(), listener);
  }

  /**
   * The channel tools of one turn of a conversation that has no subagents ({@code route} and {@code
   * cancel} find none), with the given redactor guarding {@code reply}.
   */
  public static ChannelTurn open(Conversation conversation, Redactor redactor, Listener listener) {
    return new ChannelTurn(conversation, Optional.empty(), redactor, listener);
  }

  /** The tools to bind for the turn. */
  public List<ExecutableTool> tools() {
    return tools;
  }

  /** The messages sent with {@code reply}, in order. */
  public List<String> replies() {
    synchronized (replies) {
      return List.copyOf(replies);
    }
  }

  /** The reactions on the user's message, each once, in the order they were added. */
  public List<String> reactions() {
    synchronized (reactions) {
      return List.copyOf(reactions);
    }
  }

  /** Whether the model called {@code skip}: the turn ends with no message. */
  public boolean skipped() {
    return skipped.get();
  }

  /** The reason the model gave for skipping; empty when it gave none or did not skip. */
  public String skipReason() {
    return skipReason;
  }

  /** Ends the turn: from now on every channel tool of it refuses. */
  @Override
  public void close() {
    open.set(false);
    reply.close();
  }

  private ToolResult skip(JsonNode arguments) {
    String reason =
        Optional.ofNullable(arguments.get("reason")).map(JsonNode::asString).orElse("").strip();
    skipReason = reason;
    if (!skipped.getAndSet(true)) {
      listener.onSkip(reason);
    }
    return ToolResult.success("{\"skipped\":true}");
  }

  private ToolResult react(String emoji) {
    String value = emoji.strip();
    if (!isEmoji(value)) {
      return ToolResult.failure(
          ErrorCode.INVALID_ARGUMENTS,
          "emoji must be one emoji such as 👍 or a short code such as :thumbsup:, not '"
              + (value.length() > 40 ? value.substring(0, 40) + "..." : value)
              + "'.");
    }
    boolean added;
    synchronized (reactions) {
      added = reactions.add(value);
    }
    if (added) {
      listener.onReaction(value);
    }
    return ToolResult.success("Reacted with " + value + " to the user's message.");
  }

  static boolean isEmoji(String value) {
    if (SHORT_CODE.matcher(value).matches()) {
      return true;
    }
    int[] points = value.codePoints().toArray();
    if (points.length == 0 || points.length > MAX_EMOJI_CODE_POINTS) {
      return false;
    }
    boolean symbol = false;
    for (int point : points) {
      int type = Character.getType(point);
      if (type == Character.OTHER_SYMBOL) {
        symbol = true;
      } else if (type != Character.NON_SPACING_MARK
          && type != Character.ENCLOSING_MARK
          && type != Character.FORMAT
          && type != Character.MODIFIER_SYMBOL
          && !(point >= '0' && point <= '9')
          && point != '#'
          && point != '*') {
        return false;
      }
    }
    return symbol || value.codePoints().anyMatch(point -> point == 0x20E3);
  }

  private ToolResult route(String workerId, String message) {
    Optional<Subagents.Routing> routing =
        subagents.flatMap(all -> all.route(conversation, workerId, message));
    if (routing.isEmpty()) {
      return ToolResult.failure(
          ErrorCode.INVALID_ARGUMENTS,
          "Worker " + workerId + " not found. It may have already completed or been cancelled.");
    }
    ObjectNode answer = JsonNodeFactory.instance.objectNode().put("worker_id", workerId);
    switch (routing.get()) {
      case INJECTED ->
          answer.put("routed", true).put("delivery", "joins its run before its next step");
      case RESUMED -> answer.put("routed", true).put("delivery", "it was idle and runs again");
      case NOT_ROUTED ->
          answer
              .put("routed", false)
              .put("reason", "it failed or was cancelled and takes no more input");
    }
    return ToolResult.success(answer.toString());
  }

  private ToolResult cancel(String processId, Optional<String> reason) {
    Optional<Subagents.State> before =
        subagents.flatMap(all -> all.cancel(conversation.sessionId(), processId));
    if (before.isEmpty()) {
      return ToolResult.failure(
          ErrorCode.INVALID_ARGUMENTS,
          "Subagent "
              + processId
              + " not found in this conversation. It may have already completed or been"
              + " cancelled; see list_subagents.");
    }
    String why = reason.map(String::strip).filter(text -> !text.isEmpty()).orElse("");
    return switch (before.get()) {
      case RUNNING, FINISHED ->
          ToolResult.success(
              SUBAGENT + " " + processId + " cancelled" + (why.isEmpty() ? "" : ": " + why));
      case FAILED, CANCELLED ->
          ToolResult.success(
              SUBAGENT
                  + " "
                  + processId
                  + " had already stopped ("
                  + before.get().name().toLowerCase(Locale.ROOT)
                  + ").");
    };
  }

  // Each tool's spec and compiled schema, made once: a turn binds them to its own executors.
  private static final Map<String, ExecutableTool> TEMPLATES = new ConcurrentHashMap<>();

  private ExecutableTool tool(
      String name, String description, ObjectNode parameters, ToolExecutor executor) {
    ExecutableTool template =
        TEMPLATES.computeIfAbsent(
            name,
            key ->
                ExecutableTool.of(
                    new ToolSpec(name, description, parameters, SOURCE),
                    (call, arguments) -> {
                      throw new IllegalStateException("a template is never called");
                    }));
    return template.withExecutor(
        (call, arguments) -> {
          if (!open.get()) {
            return ToolResult.failure(
                ErrorCode.TOOL_NOT_FOUND,
                "The turn that " + name + " belonged to has ended; nothing was done.");
          }
          return executor.execute(call, arguments);
        });
  }

  private static Schema schema() {
    return new Schema();
  }

  /** An object schema of string properties, none extra allowed. */
  private static final class Schema {
    private final ObjectNode root = JsonNodeFactory.instance.objectNode().put("type", "object");
    private final ObjectNode properties = root.putObject("properties");
    private final List<String> names = new ArrayList<>();

    Schema with(String name, String description) {
      properties.putObject(name).put("type", "string").put("description", description);
      names.add(name);
      return this;
    }

    Schema withEnum(String name, String description, String... values) {
      ObjectNode property =
          properties.putObject(name).put("type", "string").put("description", description);
      for (String value : values) {
        property.withArray("enum").add(value);
      }
      names.add(name);
      return this;
    }

    /** Every property so far is required. */
    Schema needs() {
      return needs(names.toArray(String[]::new));
    }

    Schema needs(String... required) {
      for (String name : required) {
        root.withArray("required").add(name);
      }
      return this;
    }

    ObjectNode build() {
      root.put("additionalProperties", false);
      return root;
    }
  }
}
