package dev.toolhost.core;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

/**
 * A tool call is one request to run a tool: a call id, the tool's name, the arguments as JSON text,
 * the session, user, principal and agent it runs for, and the instant by which it must finish.
 *
 * <p>The arguments are kept as the text the caller sent (a model, the wire): the dispatch path
 * parses and validates them, so that text that is not JSON becomes an {@code invalid_arguments}
 * result rather than an exception.
 *
 * @param callId correlates the call with its result
 * @param toolName the tool to run
 * @param arguments the arguments object as JSON text
 * @param sessionId the conversation this call belongs to, when there is one
 * @param user the user this call acts for, when known
 * @param principal the name of the principal whose credential made this call, when one did (the
 *     audit journal records it; a call's rights come from its tool set, never from this name)
 * @param agent the configured agent whose run made this call, when an agent's did (capabilities
 *     that keep state per agent, such as long-term memory, scope it by this name)
 * @param model the model that made this call, when a model did (steps such as result chunking size
 *     their work to it)
 * @param deadline the instant after which the caller no longer waits
 */
public record ToolCall(
    String callId,
    String toolName,
    String arguments,
    Optional<String> sessionId,
    Optional<String> user,
    Optional<String> principal,
    Optional<String> agent,
    Optional<String> model,
    Instant deadline) {

  /**
   * How long a call may take when neither its caller nor its tool names a time ({@link
   * ExecutableTool#timeout()}).
   */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);

  public ToolCall {
    Objects.requireNonNull(callId, "callId");
    Objects.requireNonNull(toolName, "toolName");
    Objects.requireNonNull(arguments, "arguments");
    Objects.requireNonNull(sessionId, "sessionId");
    Objects.requireNonNull(user, "user");
    Objects.requireNonNull(principal, "principal");
    Objects.requireNonNull(agent, "agent");
    Objects.requireNonNull(model, "model");
    Objects.requireNonNull(deadline, "deadline");
  }

  /** A call with a random id, no session or user, and the default timeout from now. */
  public static ToolCall of(String toolName, String arguments) {
    return new ToolCall(
        UUID.randomUUID().toString(),
        toolName,
        arguments,
        Optional.empty(),
        Optional.empty(),
        Optional.empty(),
        Optional.empty(),
        Optional.empty(),
        Instant.now().plus(DEFAULT_TIMEOUT));
  }

  /** This call with another deadline. */
  public ToolCall withDeadline(Instant deadline) {
    return new ToolCall(
        callId, toolName, arguments, sessionId, user, principal, agent, model, deadline);
  }

  /** This call with a deadline the given time from now. */
  public ToolCall withTimeout(Duration timeout) {
    return withDeadline(Instant.now().plus(timeout));
  }

  /** This call with another call id. */
  public ToolCall withCallId(String callId) {
    return new ToolCall(
        callId, toolName, arguments, sessionId, user, principal, agent, model, deadline);
  }

  /** This call in the given session. */
  public ToolCall withSessionId(String sessionId) {
    return new ToolCall(
        callId,
        toolName,
        arguments,
        Optional.of(sessionId),
        user,
        principal,
        agent,
        model,
        deadline);
  }

  /** This call acting for the given user. */
  public ToolCall withUser(String user) {
    return new ToolCall(
        callId,
        toolName,
        arguments,
        sessionId,
        Optional.of(user),
        principal,
        agent,
        model,
        deadline);
  }

  /** This call as made with the credential of the named principal. */
  public ToolCall withPrincipal(String principal) {
    return new ToolCall(
        callId,
        toolName,
        arguments,
        sessionId,
        user,
        Optional.of(principal),
        agent,
        model,
        deadline);
  }

  /** This call as made by the given agent's run. */
  public ToolCall withAgent(String agent) {
    return new ToolCall(
        callId,
        toolName,
        arguments,
        sessionId,
        user,
        principal,
        Optional.of(agent),
        model,
        deadline);
  }

  /** This call as made by the given model. */
  public ToolCall withModel(String model) {
    return new ToolCall(
        callId,
        toolName,
        arguments,
        sessionId,
        user,
        principal,
        agent,
        Optional.of(model),
        deadline);
  }

  /** This call with other arguments. */
  public ToolCall withArguments(String arguments) {
    return new ToolCall(
        callId, toolName, arguments, sessionId, user, principal, agent, model, deadline);
  }
}
