package dev.toolhost.mcp;

import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpTransport;
import java.util.List;
import reactor.core.publisher.Mono;

/**
 * A serial transport passes one message at a time to the transport it wraps, and everything else
 * straight through; {@link SerialClientTransport} and {@link SerialServerTransportProvider}'s
 * sessions are its two kinds.
 *
 * <p>Only the hand-off into the wrapped transport's sink is serialized, never a whole call: many
 * calls stay in flight at once.
 *
 * @param <T> the kind of transport wrapped
 */
abstract class SerialTransport<T extends McpTransport> implements McpTransport {

  final T delegate;
  private final Object sendLock = new Object();

  SerialTransport(T delegate) {
    this.delegate = delegate;
  }

  @Override
  public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
    // Subscribing under the lock: the SDK emits into its sink during the subscription.
    return Mono.create(
        sink -> {
          synchronized (sendLock) {
            delegate.sendMessage(message).subscribe(null, sink::error, sink::success);
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
  public <U> U unmarshalFrom(Object data, TypeRef<U> typeRef) {
    return delegate.unmarshalFrom(data, typeRef);
  }

  @Override
  public List<String> protocolVersions() {
    return delegate.protocolVersions();
  }
}
