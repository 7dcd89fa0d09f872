package dev.toolhost.mcp;

import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Function;
import reactor.core.publisher.Mono;

/**
 * A serial client transport passes one message at a time to the transport it wraps, and remembers
 * the JSON-RPC id of every tool call it sends, by the call's progress token, so that the bridge can
 * name that call in a {@code notifications/cancelled}.
 *
 * <p>MCP Java SDK 2.1.0: {@code StdioClientTransport.sendMessage} emits into a unicast Reactor sink
 * with {@code tryEmitNext}, which fails ("signaled serially", {@code FAIL_NON_SERIALIZED}) when two
 * threads send at once; the failed request then waits for its timeout. Only the hand-off into the
 * sink is serialized here, never a whole call: many calls stay in flight at once. The SDK assigns a
 * request's id inside its session ({@code McpClientSession.sendRequest}) and has no cancellation
 * API, so the id is read here, on its way out. Remove the serializing once the SDK serializes its
 * own sends, and the ids once it cancels requests itself.
 */
final class SerialClientTransport extends SerialTransport<McpClientTransport>
    implements McpClientTransport {

  // The ids of the tool calls sent, by progress token, until the bridge forgets them.
  private final Map<String, Object> idsByToken = new ConcurrentHashMap<>();

  SerialClientTransport(McpClientTransport delegate) {
    super(delegate);
  }

  @Override
  public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
    if (message instanceof McpSchema.JSONRPCRequest request
        && request.params() instanceof McpSchema.CallToolRequest call
        && call.progressToken() != null
        && request.id() != null) {
      idsByToken.put(String.valueOf(call.progressToken()), request.id());
    }
    return super.sendMessage(message);
  }

  /** The JSON-RPC id of the tool call sent with this progress token, if it was sent. */
  Optional<Object> requestId(String progressToken) {
    return Optional.ofNullable(idsByToken.get(progressToken));
  }

  /** Forgets the id of the tool call sent with this progress token, once it is over. */
  void forget(String progressToken) {
    idsByToken.remove(progressToken);
  }

  /**
   * Tells the server to stop working on a request it was sent ({@code notifications/cancelled},
   * with the request's id and the reason); the answer, if any still comes, is not waited for.
   */
  Mono<Void> cancel(Object requestId, String reason) {
    return sendMessage(
        new McpSchema.JSONRPCNotification(
            "notifications/cancelled", Map.of("requestId", requestId, "reason", reason)));
  }

  @Override
  public Mono<Void> connect(
      Function<Mono<McpSchema.JSONRPCMessage>, Mono<McpSchema.JSONRPCMessage>> handler) {
    return delegate.connect(handler);
  }

  @Override
  public void setExceptionHandler(Consumer<Throwable> handler) {
    delegate.setExceptionHandler(handler);
  }
}
