package dev.toolhost.mcp;

import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpTransport;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;
import reactor.core.publisher.Mono;

/**
 * A serial client transport passes one message at a time to the transport it wraps.
 *
 * <p>MCP Java SDK 2.1.0: {@code StdioClientTransport.sendMessage} emits into a unicast Reactor sink
 * with {@code tryEmitNext}, which fails ("signaled serially", {@code FAIL_NON_SERIALIZED}) when two
 * threads send at once; the failed request then waits for its timeout. Only the hand-off into the
 * sink is serialized here, never a whole call: many calls stay in flight at once. Remove this
 * wrapper once the SDK serializes its own sends.
 */
final class SerialClientTransport implements McpClientTransport {

  private final McpClientTransport delegate;
  private final Object sendLock = new Object();

  SerialClientTransport(McpClientTransport delegate) {
    this.delegate = delegate;
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

  @Override
  public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
    return send(delegate, sendLock, message);
  }

  /**
   * Sends the message through the transport, one hand-off at a time under the lock; the server
   * side's sessions send through here too.
   */
  static Mono<Void> send(McpTransport transport, Object lock, McpSchema.JSONRPCMessage message) {
    // Subscribing under the lock: the SDK emits into its sink during the subscription.
    return Mono.create(
        sink -> {
          synchronized (lock) {
            transport.sendMessage(message).subscribe(null, sink::error, sink::success);
          }
        });
  }

  @Override
  public Mono<Void> closeGracefully() {
    return delegate.closeGracefully();
  }

  @Override
  public void close() {
    delegate.close();
  }

  @Override
  public <T> T unmarshalFrom(Object data, TypeRef<T> typeRef) {
    return delegate.unmarshalFrom(data, typeRef);
  }

  @Override
  public List<String> protocolVersions() {
    return delegate.protocolVersions();
  }
}
