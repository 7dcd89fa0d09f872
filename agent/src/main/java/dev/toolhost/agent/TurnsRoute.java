package dev.toolhost.agent;

import dev.toolhost.core.ApiError;
import dev.toolhost.core.ToolCall;
import dev.toolhost.core.ToolResult;
import dev.toolhost.core.spi.Principal;
import dev.toolhost.core.spi.Route;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The turns route is the conversation API of a host's agents: {@code POST /v1/agents/{name}/turns}
 * with {@code {"message", "session_id"?}} runs one turn of a conversation with the named agent, the
 * channel tools ({@link ChannelTurn}) bound to it, and answers what the turn did: {@code
 * session_id}, {@code messages} (each {@code reply}, then the final text unless the turn was
 * skipped), {@code reactions} on the user's message, {@code skipped}, {@code stop}, {@code
 * tool_calls}, {@code status} (the subagents' updates) and {@code usage}.
 *
 * <p>Without a {@code session_id} a new conversation starts and its id comes back; with one, the
 * turn continues that conversation of that agent; an id the host does not know is 404. A session
 * runs one turn at a time (409 while one runs). At most {@link #MAX_SESSIONS} conversations are
 * kept; past that, the least recently used idle one is forgotten.
 *
 * <p>With {@code Accept: text/event-stream} the answer is server-sent events as the turn goes:
 * {@code session}, {@code text} (the model's text as it streams, redacted), {@code tool_call},
 * {@code tool_result}, {@code reply}, {@code reaction}, {@code skip}, then {@code turn} (the JSON
 * answer) or {@code error}. Bad input is 400 naming what was wrong. Served behind the host's
 * request guard like every route. Thread-safe.
 */
final class TurnsRoute {

  /** The route's path. */
  static final String PATH = "/v1/agents/{name}/turns";

  /** How many conversations are kept at most. */
  static final int MAX_SESSIONS = 1024;

  /** The longest user message a turn takes, in characters. */
  static final int MAX_MESSAGE = 100_000;

  private static final Pattern SESSION_ID = Pattern.compile("[A-Za-z0-9._:-]{1,128}");
  private static final Set<String> FIELDS = Set.of("message", "session_id");
  private static final String EVENT_STREAM = "text/event-stream";
  private static final JsonMapper MAPPER = JsonMapper.shared();

  private final Supplier<Optional<Agents>> agents;
  private final Route route = new Route("POST", PATH, this::answer);
  private final Map<String, Session> sessions = new LinkedHashMap<>(16, 0.75f, true);

  /** A route over the agents the supplier gives once the host is ready. */
  TurnsRoute(Supplier<Optional<Agents>> agents) {
    this.agents = Objects.requireNonNull(agents, "agents");
  }

  /** The route to register. */
  Route route() {
    return route;
  }

  private static final class Session {
    final Conversation conversation;
    boolean busy;

    Session(Conversation conversation) {
      this.conversation = conversation;
    }
  }

  /** The input of one turn, checked. */
  private record Input(String agent, String message, Optional<String> sessionId) {}

  Route.Answer answer(Route.Request request) {
    Optional<Agents> ready = agents.get();
    if (ready.isEmpty()) {
      return Route.Answer.error(ApiError.UNAVAILABLE, "The host's agents are not ready yet.");
    }
    Agents all = ready.get();
    String name = route.variable(request.path()).orElseThrow();
    if (!all.names().contains(name)) {
      return Route.Answer.error(
          ApiError.NOT_FOUND,
          "There is no agent '" + name + "'. Agents: " + String.join(", ", all.names()) + ".");
    }
    Principal principal = request.principal();
    String profile = all.agent(name).definition().profile();
    if (!principal.mayUse(profile)) {
      // The agent runs under its profile: a principal that may not use it may not talk to it.
      return Route.Answer.error(ApiError.FORBIDDEN, principal.profileRefusal(profile));
    }
    Input input;
    try {
      input = read(name, request);
    } catch (IllegalArgumentException e) {
      return Route.Answer.error(ApiError.INVALID_REQUEST, e.getMessage());
    }
    Session session;
    String sessionId = input.sessionId().orElseGet(() -> UUID.randomUUID().toString());
    synchronized (sessions) {
      // A conversation is its starter's: another principal's session id is one it does not have.
      String key = principal.name() + "\u0000" + name + "\u0000" + sessionId;
      session = sessions.get(key);
      if (session == null && input.sessionId().isPresent()) {
        return Route.Answer.error(
            ApiError.NOT_FOUND,
            "There is no session '"
                + sessionId
                + "' with agent '"
                + name
                + "' (it may have been forgotten); leave session_id out to start one.");
      }
      if (session == null) {
        session = new Session(all.conversation(name, sessionId));
        evictIdle();
        sessions.put(key, session);
      }
      if (session.busy) {
        return Route.Answer.error(
            ApiError.CONFLICT,
            "Session '" + sessionId + "' is running a turn; send the next when it has answered.");
      }
      session.busy = true;
    }
    Session running = session;
    boolean events =
        request.header("accept").map(accept -> accept.contains(EVENT_STREAM)).orElse(false);
    if (!events) {
      try {
        Turn turn = new Turn(all, name, running.conversation, input.message(), Events.NONE);
        return turn.run()
            .map(document -> Route.Answer.json(document.toString()))
            .orElseGet(() -> Route.Answer.error(ApiError.MODEL_ERROR, turn.failure));
      } finally {
        release(running);
      }
    }
    return Route.Answer.eventStream(
        out -> {
          try {
            Events sink = new Events(out);
            sink.send(
                "session",
                MAPPER
                    .createObjectNode()
                    .put("session_id", running.conversation.sessionId())
                    .put("agent", name));
            Turn turn = new Turn(all, name, running.conversation, input.message(), sink);
            Optional<ObjectNode> done = turn.run();
            if (done.isPresent()) {
              sink.send("turn", done.get());
            } else {
              sink.send("error", ApiError.MODEL_ERROR.fields(turn.failure));
            }
          } finally {
            release(running);
          }
        });
  }

  private void release(Session session) {
    synchronized (sessions) {
      session.busy = false;
    }
  }

  // Keeps room for one more: forgets the least recently used idle sessions beyond the bound.
  private void evictIdle() {
    Iterator<Session> oldestFirst = sessions.values().iterator();
    while (sessions.size() >= MAX_SESSIONS && oldestFirst.hasNext()) {
      if (!oldestFirst.next().busy) {
        oldestFirst.remove();
      }
    }
  }

  /** How many conversations are kept now. */
  int sessions() {
    synchronized (sessions) {
      return sessions.size();
    }
  }

  private static Input read(String agent, Route.Request request) {
    JsonNode body;
    try {
      body = MAPPER.readTree(request.text());
    } catch (JacksonException e) {
      throw new IllegalArgumentException(
          "The body is not JSON: send {\"message\": \"...\", \"session_id\"?: \"...\"}.");
    }
    if (body == null || !body.isObject()) {
      throw new IllegalArgumentException(
          "The body must be a JSON object: {\"message\": \"...\", \"session_id\"?: \"...\"}.");
    }
    List<String> unknown = new ArrayList<>();
    body.propertyNames()
        .forEach(
            field -> {
              if (!FIELDS.contains(field)) {
                unknown.add(field);
              }
            });
    if (!unknown.isEmpty()) {
      throw new IllegalArgumentException(
          "Unknown field(s) "
              + String.join(", ", unknown)
              + ": a turn takes message and, to continue a conversation, session_id.");
    }
    JsonNode message = body.get("message");
    if (message == null || !message.isString() || message.asString().isBlank()) {
      throw new IllegalArgumentException("'message' is required: the user's message, as text.");
    }
    if (message.asString().length() > MAX_MESSAGE) {
      throw new IllegalArgumentException(
          "'message' is " + message.asString().length() + " characters; at most " + MAX_MESSAGE);
    }
    JsonNode session = body.get("session_id");
    Optional<String> sessionId = Optional.empty();
    if (session != null && !session.isNull()) {
      if (!session.isString() || !SESSION_ID.matcher(session.asString()).matches()) {
        throw new IllegalArgumentException(
            "'session_id' must be the id a previous turn answered (letters, digits, '.', '_',"
                + " ':' and '-', at most 128).");
      }
      sessionId = Optional.of(session.asString());
    }
    return new Input(agent, message.asString(), sessionId);
  }

  /**
   * Server-sent events to one client, from any thread. Once a write fails (the client went away)
   * the rest are dropped and the turn goes on, so that its history stays whole.
   */
  private static class Events {
    /** No client listening (a JSON turn): nothing is written, and no turn waits on another. */
    static final Events NONE =
        new Events(OutputStream.nullOutputStream()) {
          @Override
          void send(String event, ObjectNode data) {}
        };

    private final OutputStream out;
    private boolean broken;

    Events(OutputStream out) {
      this.out = out;
    }

    synchronized void send(String event, ObjectNode data) {
      if (broken) {
        return;
      }
      try {
        out.write(
            ("event: " + event + "\ndata: " + data + "\n\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
      } catch (IOException e) {
        broken = true;
      }
    }
  }

  /** One turn: runs it, telling the events as they happen, and builds the answer. */
  private static final class Turn {
    private final Agents agents;
    private final String name;
    private final Conversation conversation;
    private final String message;
    private final Events events;
    private final List<ObjectNode> calls = new ArrayList<>();
    String failure = "";

    Turn(Agents agents, String name, Conversation conversation, String message, Events events) {
      this.agents = agents;
      this.name = name;
      this.conversation = conversation;
      this.message = message;
      this.events = events;
    }

    /** The answer; empty when the model could not answer ({@link #failure} says why). */
    Optional<ObjectNode> run() {
      ChannelTurn.Listener channel =
          new ChannelTurn.Listener() {
            @Override
            public void onReply(String content) {
              events.send("reply", MAPPER.createObjectNode().put("content", content));
            }

            @Override
            public void onReaction(String emoji) {
              events.send("reaction", MAPPER.createObjectNode().put("emoji", emoji));
            }

            @Override
            public void onSkip(String reason) {
              events.send(
                  "skip",
                  MAPPER.createObjectNode().put("reason", agents.redactor().redact(reason)));
            }
          };
      RunListener listener =
          new RunListener() {
            @Override
            public void onText(String delta) {
              events.send("text", MAPPER.createObjectNode().put("delta", delta));
            }

            @Override
            public void onToolCall(ToolCall call) {
              events.send("tool_call", describe(call));
            }

            @Override
            public void onToolResult(ToolCall call, ToolResult result) {
              ObjectNode described = describe(call).put("ok", !result.isError());
              if (result instanceof ToolResult.Failure failed) {
                described.put("error_code", failed.error().code().wireName());
              }
              synchronized (calls) {
                calls.add(described);
              }
              events.send("tool_result", described);
            }
          };
      RunResult result;
      ChannelTurn turn = ChannelTurn.open(agents, conversation, channel);
      try (turn) {
        result = agents.agent(name).run(conversation, message, listener, turn);
      } catch (ModelException e) {
        failure = e.getMessage();
        return Optional.empty();
      }
      ObjectNode document = MAPPER.createObjectNode();
      document.put("session_id", conversation.sessionId());
      document.put("agent", name);
      ArrayNode messages = document.putArray("messages");
      turn.replies().forEach(messages::add);
      if (!turn.skipped() && !result.text().isBlank()) {
        messages.add(result.text());
      }
      ArrayNode reactions = document.putArray("reactions");
      turn.reactions().forEach(reactions::add);
      document.put("skipped", turn.skipped());
      if (turn.skipped() && !turn.skipReason().isEmpty()) {
        document.put("skip_reason", agents.redactor().redact(turn.skipReason()));
      }
      document.put("stop", result.stop().name().toLowerCase(Locale.ROOT));
      ArrayNode toolCalls = document.putArray("tool_calls");
      synchronized (calls) {
        calls.forEach(toolCalls::add);
      }
      ArrayNode status = document.putArray("status");
      // What subagents report is model text the secret scanner has not seen yet.
      conversation.drainStatus().forEach(line -> status.add(agents.redactor().redact(line)));
      result
          .usage()
          .ifPresent(
              usage ->
                  document
                      .putObject("usage")
                      .put("input_tokens", usage.inputTokens())
                      .put("output_tokens", usage.outputTokens()));
      return Optional.of(document);
    }

    private static ObjectNode describe(ToolCall call) {
      ObjectNode node = MAPPER.createObjectNode();
      node.put("id", call.callId());
      return node.put("name", call.toolName());
    }
  }
}
